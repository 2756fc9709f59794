"""The OLTP scale-out end to end through kitlib.plan / kitlib.run: native and Docker on a volume."""

from __future__ import annotations

import os

import pytest

import kitlib

from ..conftest import leftovers

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-host-volume"]


def test_quick_oltp_scaleout_records_every_instance_and_the_aggregate(
    docker_client, root_netns, bench_image, isolated_dirs
):
    results, _ = isolated_dirs
    plan = kitlib.plan("scaleout-oltp", environments=ENVS, repetitions=1)
    result = kitlib.run(plan, results_root=results)
    assert len(result.failures) == 0, result.failures.to_string()
    records = result.records
    tps = records[records["metric"] == "tps"]
    instances = plan.params.instances
    points = len(ENVS) * len(plan.params.placements) * len(plan.params.threads)
    assert len(tps) == points * (instances + 1) and (tps["value"] > 0).all()
    assert set(tps["instance"].astype(str)) == {*(str(i) for i in range(instances)), "all"}
    assert set(records["placement"]) == {"default", "pinned"} and (records["instances"] == instances).all()
    assert records["placement_applicable"].notna().all() and records["threads"].notna().all()
    assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()  # probed around each
    for (_, _), part in tps.groupby(["env", "placement"]):
        aggregate = part.loc[part["instance"].astype(str) == "all", "value"].iloc[0]
        each = part.loc[part["instance"].astype(str) != "all", "value"].sum()
        assert 0.8 * each < aggregate <= each * 1.001  # one wall clock: never more than the clients' own rates
    assert leftovers(docker_client) == [] and leftovers(docker_client, os.getpid()) == []
