"""Start-up time: fresh containers timed from start to ready, and removed afterwards."""

from __future__ import annotations

import os

import pytest

import kitlib

from ..conftest import leftovers

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]


def test_container_start_to_ready_is_measured_per_repetition(docker_client, root_netns, bench_image, isolated_dirs):
    plan = kitlib.plan("startup", environments=["docker-host-volume", "docker-nat-volume"], repetitions=2)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0
    records = result.records
    ready = records[records["metric"] == "start_to_ready"]
    assert len(ready) == 4 and set(ready["env"]) == {"docker-host-volume", "docker-nat-volume"}
    assert (ready["value"] > 0).all() and (ready["unit"] == "s").all()
    assert set(records["metric"]) == {"start_to_ready", "first_command", "remove"}
    assert (result.root / "raw").exists()
    # a figure drawn from the run's own records names the machine from the run folder's provenance
    from kitlib.analyse.figures import hosts

    assert set(records["source"]) == {str(result.root)}
    assert "no provenance" not in hosts.describe(records) and "CPUs" in hosts.describe(records)
    assert leftovers(docker_client, os.getpid()) == []


def test_native_has_no_start_up_to_measure():
    from kitlib.measure.experiments.startup import StartupWorkload
    from kitlib.specs.startup import StartupParams

    workload = StartupWorkload(StartupParams())
    assert not workload.applies_to("native")
    assert workload.applies_to("qemu-tcg") and workload.applies_to("docker-nat-overlay")
