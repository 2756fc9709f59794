"""The latency study: the request-response service on this host, and a quick papermill run."""

from __future__ import annotations

import subprocess
import sys
import time

import pandas as pd
import pytest

from kitlib.core import latency_analysis, paths, services
from kitlib.measure import parsers
from kitlib.notebooks import execute

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.netns
def test_quick_notebook_run(docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    parameters = {
        "results_dir": str(results),
        "figures_dir": str(figures),
        "repetitions": 1,
        "requests": 1500,
        "quotas": [1000, 10000],
        "sizes_kb": [1, 64],
        "work": 200,
        # storage at its smallest: one write size, copy-up size and two layer counts tell overlay from a volume
        "write_sizes_kb": [4],
        "file_operations": 300,
        "copyup_sizes_mb": [1],
        "layers": [1, 2],
        "tree_files": 50,
    }
    execute(paths.notebooks_root() / "experiments" / "latency.ipynb", results / "latency.ipynb", parameters)
    records = pd.read_csv(next(results.glob("latency/*/records.csv")))
    assert set(records["workload"]) == {"shares", "quota", "bridge", "storage", "copy_up", "layers"}
    assert set(records["env"]) == {
        "native",
        "docker-host-volume+shares1024",
        "docker-host-volume+period10000+quota1000",
        "docker-host-volume+period10000+quota10000",
        "docker-host-volume",
        "docker-nat-volume",
        "docker-host-overlay",
    }
    copy_up = records[(records["workload"] == "copy_up") & (records["metric"] == "latency_mean")]
    by_env = copy_up.groupby("env")["value"].mean()
    assert by_env["docker-host-overlay"] > by_env["docker-host-volume"]  # a copy of >= 1 MB vs none
    assert set(records.loc[records["workload"] == "layers", "env"]) == {"docker-host-overlay"}
    quota = latency_analysis.quota_table(records)
    # a 10% quota caps the server's CPU near 10%; the full period does not
    assert quota.iloc[0]["server_cpu_utilization"] < 15
    assert quota.iloc[0]["latency_p99"] > quota.iloc[1]["latency_p99"]
    assert set(records.loc[records["workload"] == "quota", "quota"]) == {1000, 10000}
    for name in ("fig1-cdf-shares", "fig2-quota", "fig3-bridge", "fig4-6-storage"):
        assert len(list(figures.glob(f"latency-closer-look-{name}-*.png"))) == 1  # one file per host: this one
    assert leftovers(docker_client) == []


@pytest.mark.server
def test_service_does_real_work_per_request():
    """More server work per request shows up as server CPU time and as latency."""
    server = subprocess.Popen(
        services.command("rr", "server", 17931),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        executable=sys.executable,
    )
    try:
        time.sleep(0.5)
        results = {}
        for work in (0, 2000):
            out = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    services.source("rr"),
                    "client",
                    "127.0.0.1",
                    "17931",
                    "300",
                    "100",
                    "200",
                    str(work),
                    "20",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            ).stdout
            results[work] = {m.metric: m.value for m in parsers.get("kit-rr")(out, "client") if not m.dims}
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert results[2000]["latency_mean"] > results[0]["latency_mean"] + 100
    assert results[2000]["server_cpu_utilization"] > results[0]["server_cpu_utilization"]
