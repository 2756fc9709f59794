"""The scale-out notebook end to end: papermill, native and Docker NAT, the proxy on the peer."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import kitlib
from kitlib import paths
from kitlib.notebooks import execute

from ..conftest import leftovers

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-nat-volume"]
TINY = {"requests": 4000, "keyspace": 2000, "clients": 4}


def test_quick_scaleout_records_speedup_and_placement(docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    parameters = {"environments": ENVS, "repetitions": 1, "results_dir": str(results), "figures_dir": str(figures)}
    execute(
        paths.notebooks_root() / "experiments" / "scaleout.ipynb", results / "scaleout.ipynb", {**parameters, **TINY}
    )

    plan = kitlib.plan("scaleout", environments=ENVS, repetitions=1, **TINY)
    run_dir = results / "scaleout" / plan.run_id
    assert not (run_dir / "failures.csv").exists()
    records = pd.read_csv(run_dir / "records.csv")
    throughput = records[records["metric"] == "throughput"]
    assert set(throughput["config"]) == {"baseline", "scale-out"} and (throughput["value"] > 0).all()
    speedup = records[records["metric"] == "speedup"]
    assert len(speedup) == len(ENVS) * 2 and (speedup["value"] > 0).all()
    assert set(records["placement"]) == {"default", "pinned"} and set(records["irq_pinning"]) == {"not done"}
    assert (records["instances"] == 2).all()
    for name in ("scaleout-fig3-throughput", "scaleout-fig4-speedup"):
        assert (figures / f"{name}.png").stat().st_size > 10_000
    assert leftovers(docker_client) == [] and leftovers(docker_client, os.getpid()) == []
