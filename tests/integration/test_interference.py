"""A point measured while a busy loop runs on the system under test's CPU is caught as disturbed,
measured again, and its discarded attempt kept with the reason (kitlib.interference)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from kitlib import cpus

from ..conftest import leftovers


@pytest.mark.netns
def test_a_point_disturbed_by_a_cpu_hog_is_measured_again(root_netns, docker_client, isolated_dirs):
    results, _ = isolated_dirs
    sut_cpu = cpus.split(1).sut_cpus[-1]
    # bounded by itself (timeout) and killed as a group below however the test ends
    hog = subprocess.Popen(
        ["taskset", "-c", str(sut_cpu), "timeout", "120", "sh", "-c", "while :; do :; done"],
        start_new_session=True,
    )
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "kitlib.cli",
                "run",
                "net",
                "--env",
                "native",
                "--no-notebook",
                "--repetitions",
                "1",
                "--max-attempts",
                "2",
                "-p",
                "workloads",
                '["rr"]',
                "-p",
                "seconds",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "KIT_RESULTS": str(results)},
        )
    finally:
        os.killpg(hog.pid, signal.SIGKILL)
        hog.wait(timeout=10)
    print(run.stdout[-2000:], run.stderr[-2000:])
    assert run.returncode == 0, run.stderr
    run_dir = next(results.glob("net/*"))
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["attempt"]) == {2} and set(records["discarded_attempts"]) == {1}
    for column in ("steal_pct", "foreign_cpu_pct", "runqueue_mean", "cpu_mhz", "disturbed"):
        assert column in records.columns
    assert records["cpu_mhz"].isna().all() or (records["cpu_mhz"] > 0).all()  # missing where unreported, never 0
    discarded = sorted((run_dir / "units").glob("*.attempt1.json"))
    assert len(discarded) == 2  # one per point (tcp, udp)
    for path in discarded:
        attempt = json.loads(path.read_text())
        assert attempt["status"] == "discarded"
        assert attempt["reason"].startswith("disturbed: CPU of other processes")
        assert attempt["interference"]["figures"]["foreign_cpu_pct"] > 10
        assert attempt["records"]  # what it measured is kept, never mixed into records.csv
        assert (run_dir / "raw" / f"{path.stem}.sockperf.txt").exists()
        kept = json.loads((run_dir / "units" / path.name.replace(".attempt1", "")).read_text())
        assert kept["status"] == "ok" and kept["interference"]["attempt"] == 2
        assert kept["interference"]["discarded_attempts"][0]["file"] == f"units/{path.name}"
    assert "point(s) measured again" in run.stdout
    assert leftovers(docker_client) == []
