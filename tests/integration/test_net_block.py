"""Network and block experiments: the fio preflight on a real run, and quick notebook runs."""

from __future__ import annotations

import pandas as pd
import pytest

import kitlib
from kitlib.core import paths
from kitlib.notebooks import execute

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.netns
@pytest.mark.parametrize(
    ("name", "parameters", "envs", "figure"),
    [
        ("net", {"seconds": 1}, ["native", "docker-nat-volume"], "net-fig2-3-throughput-cpu-rtt"),
        (
            "block",
            {"file_mb": 32, "runtime": 1, "iodepth": 8},
            ["native", "docker-host-overlay"],
            "block-fig5-7-sequential-random-latency",
        ),
    ],
)
def test_quick_notebook_run(name, parameters, envs, figure, docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    execute(
        paths.notebooks_root() / "experiments" / f"{name}.ipynb",
        results / f"{name}.ipynb",
        {
            "results_dir": str(results),
            "figures_dir": str(figures),
            "repetitions": 1,
            "environments": envs,
            **parameters,
        },
    )
    run_dir = next(results.glob(f"{name}/*/"))
    assert not (run_dir / "failures.csv").exists(), (run_dir / "failures.csv").read_text()
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == set(envs)
    if name == "net":
        rtt = records[(records["metric"] == "rtt_mean")]
        assert set(rtt["protocol"]) == {"tcp", "udp"} and (rtt["value"] > 0).all()
        assert set(records.loc[records["metric"] == "throughput", "direction"]) == {"sut_tx", "sut_rx"}
        assert records.loc[records["metric"] == "cpu_utilization", "value"].between(0, 100).all()
        # the CPUs' capacity probed around every point, in % of the run's usual figure
        assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()
    else:
        assert set(records["workload"]) == {
            "seq_read",
            "seq_write",
            "rand_read",
            "rand_write",
            "rand_mixed",
            "rand_read_latency",
        }
        assert (records["direct"] == 1).all()
        assert set(records.loc[records["env"] == "docker-host-overlay", "filesystem"]) == {"overlayfs"}
    assert len(list(figures.glob(f"{figure}-*.png"))) == 1  # one file per host: this one
    assert leftovers(docker_client) == []


@pytest.mark.netns
def test_preflight_refuses_a_file_larger_than_the_free_space(root_netns, isolated_dirs):
    plan = kitlib.plan(
        "block", environments=["native"], repetitions=1, file_mb=9_000_000, runtime=1, workloads=["rand_read"]
    )
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert result.records.empty
    reason = result.failures["reason"].iloc[0]
    assert "free" in reason and "9000000 MB test file" in reason


@pytest.mark.netns
def test_a_sockperf_point_is_judged_by_its_windows_and_leaves_no_log_behind(root_netns, isolated_dirs):
    """sockperf's full log is reduced to quarter-second windows on the peer and removed there: the point's
    records carry its steadiness, its unit file the windows' verdict, its raw files the windows."""
    import glob
    import json

    results, _ = isolated_dirs
    before = set(glob.glob("/tmp/kit-sockperf-log.*"))
    plan = kitlib.plan("net", environments=["native"], repetitions=1, workloads=["rr"], seconds=2)
    outcome = kitlib.run(plan, results_root=results, progress=False)
    assert outcome.failures is None or len(outcome.failures) == 0, outcome.failures
    rtt = outcome.records[outcome.records["metric"] == "rtt_mean"]
    assert set(rtt["protocol"]) == {"tcp", "udp"} and (rtt["point_seconds"] == 2).all()
    assert rtt["steady"].notna().all() and rtt["steady_halfwidth_pct"].notna().all()
    run_dir = results / "net" / plan.run_id
    for unit_file in (run_dir / "units").glob("*.json"):
        steadiness = json.loads(unit_file.read_text())["steady"]
        assert steadiness["interval_s"] == 0.25 and steadiness["intervals"] >= 5  # 1.5 s of valid duration
        assert steadiness["warmup_method"] == "MSER-1"
    # the points that count (a point measured again keeps its discarded attempt's windows beside them)
    windows = sorted(p for p in (run_dir / "raw").glob("*.rtt-windows.txt") if ".attempt" not in p.name)
    assert len(windows) == 2 and all("complete=yes" in path.read_text() for path in windows)
    assert set(glob.glob("/tmp/kit-sockperf-log.*")) == before, "the peer's full logs are removed"
