"""Docker labels under other OCI runtimes (`+runtime=NAME`): the engine's own list, real runs of the
four experiments that tell runtimes apart, what provenance keeps of the runtime, and nothing left."""

from __future__ import annotations

import os

import pytest

import kitlib
from kitlib.measure import environments
from kitlib.measure.host import docker_runtimes, stranded_shims

from ..conftest import leftovers, missing, plan_session

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

#: the experiments that tell runtimes apart, each at a size that runs in seconds
TINY = {
    "redis": {"clients": [1], "requests": 5000},
    "net": {"seconds": 1},
    "startup": {},
    "block": {"file_mb": 16, "runtime": 1, "iodepth": 4, "workloads": ["rand_read"]},
}


def usable_runtime(name: str) -> str:
    label = f"docker-host-volume+runtime={name}"
    ok, reason = environments.availability_of(label)
    if not ok:
        missing("runtimes", f"{label}: {reason}")
    return label


@pytest.fixture(scope="module")
def runtime_labels(docker_client, root_netns, bench_image):
    """crun, and gVisor with the network stack this host runs it with."""
    gvisor = "runsc" if environments.availability_of("docker-host-volume+runtime=runsc")[0] else "runsc-hostinet"
    return [usable_runtime("crun"), usable_runtime(gvisor)]


def no_stranded_shims(client) -> bool:
    return stranded_shims.settled(client) == []


@pytest.mark.parametrize(
    "experiment",
    # net: the engine and runtime path the other three run, at several times their time
    ["block", pytest.param("net", marks=pytest.mark.extended), "redis", "startup"],
)
def test_each_experiment_runs_under_each_runtime(experiment, runtime_labels, docker_client, isolated_dirs):
    plan = kitlib.plan(experiment, environments=runtime_labels, repetitions=1, **TINY[experiment])
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    records, failed = result.records, result.failures
    # a server gVisor cannot run (nuttcp and sockperf under its 2022 release) fails the point saying so
    for row in failed.to_dict("records"):
        assert "runtime=runsc" in row["env"] and "server " in row["reason"] and " exited" in row["reason"], row
    assert set(records["env"]) | set(failed["env"] if len(failed) else []) == set(runtime_labels)
    assert "docker-host-volume+runtime=crun" in set(records["env"])
    assert (records.loc[records["metric"].isin(["throughput", "iops", "start_to_ready"]), "value"] > 0).all()
    assert set(records["oci_runtime"]) == {label.split("=", 1)[1] for label in set(records["env"])}
    session = plan_session(result.root)
    for label in set(records["env"]):
        runtime = session["environments"][label]["runtime"]
        assert runtime["name"] == label.split("=", 1)[1] and runtime["version"] and runtime["default"] is False
        if runtime["name"].startswith("runsc"):
            assert runtime["platform"] == "ptrace" and runtime["network"]
    assert leftovers(docker_client, os.getpid()) == []
    assert no_stranded_shims(docker_client)


def test_the_default_runtime_is_recorded_too(docker_client, root_netns, bench_image, isolated_dirs):
    plan = kitlib.plan("startup", environments=["docker-host-volume"], repetitions=1)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    runtime = plan_session(result.root)["environments"]
    assert runtime["docker-host-volume"]["runtime"]["default"] is True
    assert runtime["docker-host-volume"]["runtime"]["version"].startswith("runc")


def test_a_runtime_the_engine_does_not_list_is_refused_with_its_list(
    docker_client, root_netns, bench_image, isolated_dirs
):
    plan = kitlib.plan("startup", environments=["docker-host-volume+runtime=nosuch"], repetitions=1)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert result.records.empty
    reason = result.failures["reason"].iloc[0]
    assert "no runtime 'nosuch'" in reason and "it lists: " in reason and "runc" in reason
    assert leftovers(docker_client, os.getpid()) == []


def test_a_runtime_that_cannot_start_a_container_here_is_refused_and_strands_nothing(docker_client, bench_image):
    """Every registered runtime is tried; one that fails (gVisor's netstack where it cannot start)
    is a "no" with its error, and its sandbox and shim are gone afterwards."""
    statuses = {status.name: status for status in docker_runtimes.statuses(bench_image)}
    assert {"runc", "crun", "runsc", "runsc-hostinet"} <= set(statuses), "the set-up registers crun and gVisor"
    for status in statuses.values():
        assert status.reason and status.facts["path"]
        if not status.usable:
            assert "does not start" in status.reason
    assert no_stranded_shims(docker_client)
