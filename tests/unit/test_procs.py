"""Bounded commands on real processes: a timeout ends the whole process group, also what the leader
left behind holding its output pipe."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitlib.core.procs import OWNER_VARIABLE, run_bounded, tuning_left_out
from kitlib.measure.capacity import host_program


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_timeout_ends_what_the_exited_leader_left_running():
    # the shell exits at once; its background sleep keeps the pipe open, so the output never ends
    returncode, output = run_bounded(["sh", "-c", "sleep 60 & echo $!"], timeout=1)
    assert returncode is None
    left_behind = int(output.split()[0])
    assert not _running(left_behind)


def test_the_libraries_tuning_variables_stay_out_of_what_the_kit_starts(monkeypatch):
    """A native point loads its libraries as a container's does: the caller's OpenMP, BLAS and allocator
    settings are left out (and recorded), everything else is inherited."""
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OMP_PROC_BIND", "spread")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")
    monkeypatch.setenv("KIT_TEST_KEPT", "yes")
    returncode, output = run_bounded(["env"], timeout=30)
    seen = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    assert returncode == 0
    assert not {"OPENBLAS_CORETYPE", "OMP_PROC_BIND", "MALLOC_ARENA_MAX"} & seen.keys()
    assert seen["KIT_TEST_KEPT"] == "yes" and seen["PATH"] and seen[OWNER_VARIABLE]
    left_out = tuning_left_out()
    assert left_out["OPENBLAS_CORETYPE"] == "Haswell" and "KIT_TEST_KEPT" not in left_out


def test_native_linpack_picks_the_blas_kernels_a_container_would(monkeypatch):
    """OpenBLAS chooses its kernels from the CPU unless OPENBLAS_CORETYPE names them; the kit's Linpack
    started by the kit reports the same choice with the caller's override as without it."""
    program = host_program("kit-linpack")
    if program is None:
        pytest.skip("no C compiler or OpenBLAS here to build the kit's Linpack")
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    own_choice = _blas_line(program)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    assert _blas_line(program) == own_choice
    assert "Prescott" not in own_choice


def _blas_line(program: Path) -> str:
    returncode, output = run_bounded([str(program), "200", "1"], timeout=120)
    assert returncode == 0, output
    return next(line for line in output.splitlines() if line.startswith("blas "))
