"""Bounded commands on real processes: a timeout ends the whole process group, also what the leader
left behind holding its output pipe."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kitlib.core.procs import OWNER_VARIABLE, exited, run_bounded, stop_pid, tuning_left_out
from kitlib.core.signals import default_dispositions
from kitlib.measure.capacity import host_program


def test_a_timeout_ends_what_the_exited_leader_left_running():
    # the shell exits at once; its background sleep keeps the pipe open, so the output never ends
    returncode, output = run_bounded(["sh", "-c", "sleep 60 & echo $!"], timeout=1)
    assert returncode is None
    left_behind = int(output.split()[0])
    assert exited(left_behind)


#: a process that ignores SIGTERM (a server stuck in its shutdown), saying so once it does
DEAF_TO_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('deaf', flush=True); time.sleep(60)"
)


def _start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, preexec_fn=default_dispositions)


def _start_deaf() -> subprocess.Popen:
    proc = _start([sys.executable, "-c", DEAF_TO_TERM])
    assert proc.stdout.readline().strip() == "deaf"  # its handler is set: a SIGTERM now is ignored
    return proc


def test_a_process_that_ends_on_sigterm_is_stopped_by_it():
    sleeper = _start(["sleep", "60"])
    try:
        stop_pid(sleeper.pid, grace=30)
        assert exited(sleeper.pid)  # an unreaped zombie counts as exited: the wait ended on the TERM
        assert sleeper.wait(timeout=10) == -15
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_process_deaf_to_sigterm_is_killed_after_the_grace_with_what_it_leaves():
    deaf, left = _start_deaf(), _start_deaf()
    try:
        stop_pid(deaf.pid, grace=0.5, then_kill=[left.pid])
        assert deaf.wait(timeout=10) == -9
        assert left.wait(timeout=10) == -9
    finally:
        for proc in (deaf, left):
            proc.kill()
            proc.wait()


def test_a_process_that_exited_unreaped_is_not_waited_for():
    done = _start(["true"])
    try:
        assert _wait_for(lambda: exited(done.pid))  # a zombie until reaped below
        started = time.monotonic()
        stop_pid(done.pid, grace=120)
        assert time.monotonic() - started < 60  # nothing runs there: no grace waited out
        assert done.wait(timeout=10) == 0
    finally:
        done.wait()


def _wait_for(condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


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
