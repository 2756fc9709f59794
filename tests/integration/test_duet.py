"""A duet run for real: native and a Docker container measured at the same moment on the two halves of the
CPUs, the halves swapped every repetition, the A/A duet beside them, nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import kitlib
from kitlib.analyse import claims, replicas
from kitlib.core import paths, procs
from kitlib.measure.run.runner import run_plan
from kitlib.results import load_records

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
def test_a_duet_run_measures_both_sides_at_once_on_swapped_halves(docker_client, bench_image, isolated_dirs):
    results, _ = isolated_dirs
    plan = kitlib.plan(
        "cpu",
        environments=["native", "docker-host-volume"],
        order="duet",
        repetitions=3,
        linpack_n=800,
        corpus_mb=2,
    )
    run = run_plan(plan, results_root=results, progress=False)
    assert run.failures.empty, run.failures.to_string()
    records = run.records
    assert set(records["env"]) == {"native", "docker-host-volume", "native+replica"}
    assert records["duet"].notna().all()
    # each duet's two sides ran on disjoint CPUs, overlapping in time, and the halves swap with the repetition
    cpus = os.sched_getaffinity(0)
    halves = sorted(cpus)[: len(cpus) // 2], sorted(cpus)[len(cpus) // 2 : 2 * (len(cpus) // 2)]
    for (duet, workload), rows in records.groupby(["duet", "workload"]):
        sides = rows.drop_duplicates("env")
        assert len(sides) == 2, (duet, workload)
        assert len(set(sides["duet_cpus"].astype(str))) == 2
        native = sides[sides["env"] == "native"].iloc[0]
        repetition = int(native["repetition"])
        assert str(native["duet_cpus"]) == ",".join(map(str, halves[repetition % 2]))
        assert (sides["duet_overlap"].astype(float) > 0.3).all(), sides[["env", "duet_overlap"]]
    # the claims read one sample per duet, paired
    verdicts = claims.evaluate_all(load_records(run.root), "cpu")
    pxz = verdicts[verdicts["claim"] == "docker_near_native_pxz"].iloc[0]
    assert "within each duet" in pxz["reason"] and pxz["n"] <= 3, pxz["reason"]
    floor = replicas.aa_table(load_records(run.root))
    assert set(floor["design"]) == {"duet"}
    assert leftovers(docker_client, os.getpid()) == []


@pytest.mark.slow
@pytest.mark.docker
def test_stopping_a_duet_ends_both_sides_and_leaves_nothing(docker_client, bench_image, isolated_dirs, tmp_path):
    """SIGTERM while both sides measure: the native side's command and the container are gone."""
    results, _ = isolated_dirs
    script = (
        "import kitlib, sys\n"
        "from kitlib.measure.run.runner import run_plan\n"
        "plan = kitlib.plan('cpu', environments=['native', 'docker-host-volume'], order='duet', repetitions=3,"
        " workloads=['pxz'], corpus_mb=64)\n"
        f"run_plan(plan, results_root={str(results)!r}, progress=False)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=paths.PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=_default_dispositions,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not _xz_running(child.pid):
            time.sleep(0.5)
        assert _xz_running(child.pid), "no xz of the duet started within 300 s"
        child.send_signal(signal.SIGTERM)
        output, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(30)
    assert child.returncode != 0, output.decode(errors="replace")[-2000:]
    assert not [p for p in procs.owned_processes() if p[1] == child.pid], "a side's command outlived its run"
    assert leftovers(docker_client) == []


def _default_dispositions() -> None:
    """The child handles SIGINT and SIGTERM as a terminal's process would, however the test was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _xz_running(owner: int) -> bool:
    """Whether the child has an xz compressing (the native side: a process marked as the child's)."""
    return any(owner_pid == owner and "xz" in command for _, owner_pid, command in procs.owned_processes())
