"""MySQL experiment: a failed connection kept as a failure, and a quick notebook run."""

from __future__ import annotations

import pandas as pd
import pytest

import kitlib
from kitlib.core import paths
from kitlib.measure.experiments.mysql import OltpWorkload
from kitlib.notebooks import execute

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.netns
def test_quick_notebook_run(docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    envs = ["native", "docker-nat-overlay"]
    execute(
        paths.notebooks_root() / "experiments" / "mysql.ipynb",
        results / "mysql.ipynb",
        {
            "results_dir": str(results),
            "figures_dir": str(figures),
            "repetitions": 1,
            "environments": envs,
            "threads": [1, 2],
            "seconds": 2,
            "warmup_seconds": 1,
            "rows": 2000,
            "buffer_pool_mb": 64,
        },
    )
    run_dir = next(results.glob("mysql/*/"))
    assert not (run_dir / "failures.csv").exists()
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == set(envs)
    tps = records[records["metric"] == "tps"]
    assert len(tps) == 4 and (tps["value"] > 0).all()
    cpu = records[records["metric"] == "cpu_utilization"]
    assert len(cpu) == 4 and cpu["value"].between(0, 100, inclusive="right").all()
    errors = records[records["metric"] == "errors"]  # deadlocks sysbench ignored: counted, never hidden
    assert len(errors) == 4 and (errors["value"] >= 0).all()
    assert (records["rows"] == 2000).all() and (records["buffer_pool_mb"] == 64).all()
    # the CPUs' capacity probed around every point, in % of the run's usual figure
    assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()
    assert len(list(figures.glob("mysql-fig10-13-*.png"))) == 1  # one file per host: this one
    assert leftovers(docker_client) == []


@pytest.mark.netns
def test_a_failed_connection_is_a_failed_point_not_numbers(isolated_dirs, monkeypatch, root_netns):
    """Fault injection: the server is never started, so the real sysbench cannot connect."""

    def prepare_nothing(self, env, peer):
        self.target = env.address_for_peer(env.layout.ports[0], peer.host_address)

    monkeypatch.setattr(OltpWorkload, "prepare", prepare_nothing)
    plan = kitlib.plan("mysql", environments=["native"], repetitions=1, threads=[1], seconds=1)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert result.records.empty
    assert "FATAL: unable to connect to MySQL server" in result.failures["reason"].iloc[0]
