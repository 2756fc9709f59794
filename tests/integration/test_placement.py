"""Placement studies: seed 003's presets, NUMA placement reported as not applicable on one node,
and seed 003's claims evaluated on real runs of lxc and Docker."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import kitlib
from kitlib.analyse import analysis, claims
from kitlib.core import naming, numa
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure import cpus, environments

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.netns
def test_seed003_fio_preset_runs_on_lxc_and_docker_and_the_claims_decide(
    docker_client, root_netns, bench_image, isolated_dirs
):
    ok, reason = environments.availability_of("lxc")
    if not ok:
        pytest.skip(reason)
    envs = ["lxc", "docker-host-volume", "docker-nat-overlay"]
    plan = kitlib.plan("block", preset="seed003-fio", environments=envs, repetitions=2, file_mb=64, runtime=1)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    iops = result.records[result.records["metric"] == "iops"]
    assert set(iops["env"]) == set(envs) and set(iops["workload"]) == {"rand_read", "rand_write"}
    assert (iops["numjobs"] == 8).all() and (iops["iodepth"] == 16).all() and (iops["value"] > 0).all()
    by_name = {c.name: c for c in claims.CLAIMS}
    for name in ("lxc_beats_docker_random_io", "overlay_explains_lxc_gap"):
        verdict = by_name[name].evaluate(result.records)
        # two runs a side are measured, and a claim is never decided on fewer than three
        assert verdict.status == claims.INCONCLUSIVE, verdict.reason
        assert "at least 3" in verdict.reason and verdict.ratio > 0
    in_vm = by_name["docker_in_vm_costs_disk_io"].evaluate(result.records)
    assert in_vm.status == claims.NOT_TESTABLE and "docker-in-kvm" in in_vm.reason
    written = analysis.render_figures(result.records, isolated_dirs[1])
    (name,) = [n for n in written if n.startswith("placement-cloud-containers-fig3-5-iops-rtt-")]
    assert all(path.stat().st_size > 0 for path in written[name])


@pytest.mark.docker
def test_numa_placement_on_a_one_node_host_is_reported_not_applicable(docker_client, bench_image):
    if len(numa.nodes()) > 1:
        pytest.skip("this host has several NUMA nodes: placement applies")
    env = environments.create(
        "docker-host-volume+numa0",
        cpus.split(1, []),
        run_label=naming.new_run_label(),
        peer_reaches_nat=True,
        image=bench_image,
    )
    with pytest.raises(EnvironmentUnavailable, match="not applicable on this host: it has one NUMA node"):
        with env:
            pass
    assert leftovers(docker_client, os.getpid()) == []
    no_records = pd.DataFrame(columns=["experiment", "workload", "env", "metric", "value", "kernel"])
    verdict = {c.name: c for c in claims.CLAIMS}["numa_pinning_helps_memory"].evaluate(no_records)
    assert verdict.status == claims.NOT_TESTABLE and "one NUMA node" in verdict.reason
