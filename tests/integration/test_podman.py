"""Podman environments, rootful and rootless, driven through Podman's Docker-compatible API: quick
runs of redis, net, startup and block reached from the peer namespace, provenance that names
Podman, and nothing left afterwards (containers, volumes, the API service, the user's processes)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import kitlib
from kitlib.core import naming
from kitlib.core.interference import Rule
from kitlib.measure import cpus, environments
from kitlib.measure.environments.podman import podman_version
from kitlib.measure.host import podman_service as ps

from ..conftest import leftovers, missing, plan_session, start_kit

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

LABELS = ["podman-host-volume", "podman-nat-volume", "podman-rootless-nat-volume+slirp4netns"]


def podman_leftovers(owner: int) -> list[str]:
    """Podman's containers and volumes of run `owner` (root's and the rootless user's), its API
    services and helpers, and any process of the rootless user still running."""
    identities = [ps.ROOT, *filter(None, [ps.rootless_identity(create=False)])]
    found = []
    for identity in identities:
        for listing in (["ps", "-a"], ["volume", "ls"]):
            code, output = ps.podman_stdout(identity, [*listing, "--filter", f"label={naming.LABEL_PID}={owner}", "-q"])
            if code != 0:  # a rootless container's namespace seen from outside its service: it is there
                found.append(f"{identity.user} {' '.join(listing)}: listing failed: {output.strip()[:200]}")
                continue
            found += [f"{identity.user} {' '.join(listing)}: {line}" for line in output.split() if line]
    rootless = ps.rootless_identity(create=False)
    if rootless is not None:
        ps.stop_pause_process(rootless, os.getpid())  # the user namespace the listing above joined
        found += [f"{rootless.user} {comm} {pid}" for pid, uid, comm, _, _ in ps.processes() if uid == rootless.uid]
    found += [f"{comm} {pid} of {run}" for pid, _, comm, run in ps.helper_processes() if run == owner]
    services = [argv for _, _, _, argv, _ in ps.processes() if argv[1:4] == ["system", "service", "--time=0"]]
    return found + [f"service {' '.join(argv)}" for argv in services]


@pytest.fixture(scope="module")
def podman_ready(docker_client, root_netns, bench_image):
    if shutil.which("podman") is None:
        missing("podman", "podman is not installed (apt-get install podman)")
    for label in LABELS:
        ok, reason = environments.availability_of(label)
        if not ok:
            missing("podman", f"{label}: {reason}")
    return bench_image


def test_the_benchmark_image_is_copied_into_a_podman_that_lacks_it(podman_ready, docker_client):
    """A fresh machine's Podman has no image: it is loaded from Docker's, under Docker's id and name."""
    image_id = docker_client.images.get(podman_ready).id
    for name in (podman_ready, image_id):
        ps.podman(ps.ROOT, ["rmi", "--force", name], timeout=120)
    assert ps.podman(ps.ROOT, ["image", "exists", image_id])[0] != 0, "the image is still in Podman"
    assert ps._ensure_image(ps.ROOT, docker_client, podman_ready) == image_id
    code, output = ps.podman_stdout(ps.ROOT, ["image", "inspect", "--format", "{{.Id}}", podman_ready])
    assert code == 0 and image_id.removeprefix("sha256:") in output, output


def test_each_label_runs_its_container_as_the_label_says(podman_ready):
    """Rootful limits by cgroup, rootless by taskset; host vs bridge vs slirp4netns; data on a volume."""
    layout = cpus.split(1, [7000])
    for label in LABELS:
        env = environments.create(
            label, layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=podman_ready
        )
        with env:
            allowed = env.run(["sh", "-c", "grep Cpus_allowed_list /proc/self/status"], timeout=30).output
            assert allowed.split()[-1] == ",".join(map(str, layout.sut_cpus)), (label, allowed)
            assert "/data" in env.run(["sh", "-c", "grep ' /data ' /proc/mounts"], timeout=30).output
            facts = env.describe()
            assert facts["engine"] == "podman" and facts["podman_version"], facts
            assert facts["rootless"] is label.startswith("podman-rootless"), facts
            assert facts["cgroup_limits_applied"] is not facts["rootless"]
            assert facts["image_id"] == facts["docker_image_id"], "the same image as Docker's"
            expected = {"host": "host", "nat": "bridge"}.get(env.spec.network, "slirp4netns:port_handler=slirp4netns")
            assert facts["network_mode"] == expected
        assert podman_leftovers(os.getpid()) == [], label


def test_pasta_is_refused_before_podman_4_4(podman_ready):
    version = podman_version()
    if version >= (4, 4):
        pytest.skip(f"podman {version} runs pasta")
    shown = ".".join(map(str, version))
    expected = (False, f"podman {shown} predates pasta (4.4)")
    assert environments.availability_of("podman-rootless-nat-volume+pasta") == expected


@pytest.mark.parametrize(
    ("experiment", "parameters"),
    [
        ("redis", {"clients": [1], "requests": 5000}),
        # each further experiment on Podman runs the same container path as redis
        pytest.param("net", {"seconds": 1}, marks=pytest.mark.extended),
        pytest.param("startup", {}, marks=pytest.mark.extended),
        pytest.param(
            "block",
            {"file_mb": 16, "runtime": 1, "iodepth": 4, "workloads": ["rand_read", "seq_write"]},
            marks=pytest.mark.extended,
        ),
    ],
)
def test_quick_runs_on_podman(experiment, parameters, podman_ready, docker_client, isolated_dirs):
    # one attempt per point: the other work on this host must not triple the module's time
    plan = kitlib.plan(experiment, environments=LABELS, repetitions=1, interference=Rule(max_attempts=1), **parameters)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    records = result.records
    assert set(records["env"]) == set(LABELS)
    for label in LABELS:
        values = records.loc[records["env"] == label, "value"]
        assert len(values) and (values > 0).any(), (experiment, label)
    if experiment == "redis":
        mix = records[(records["op"] == "mix") & (records["metric"] == "throughput")]
        assert (mix["value"] > 0).all() and len(mix) == len(LABELS)
    session = plan_session(result.root)
    for label in LABELS:
        facts = session["environments"][label]
        assert facts["engine"] == "podman" and facts["kind"].startswith("podman"), facts
    assert leftovers(docker_client, os.getpid()) == []
    assert podman_leftovers(os.getpid()) == []


def test_kit_clean_removes_what_a_killed_rootless_run_left(podman_ready, isolated_dirs):
    label = "podman-rootless-nat-volume+slirp4netns"
    argv = ["run", "redis", "--no-notebook", "--env", label]
    argv += ["--repetitions", "1", "-p", "clients", "[1]", "-p", "requests", "50000000"]
    proc = start_kit(argv, {"KIT_RESULTS": str(isolated_dirs[0])})  # cleaned after the test if it fails
    try:
        deadline = time.monotonic() + 180
        while not any(" ps -a: " in item for item in podman_leftovers(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, "the container did not start"
            time.sleep(0.5)
        time.sleep(3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert any("service" in item for item in podman_leftovers(proc.pid)), "a SIGKILL leaves the service running"
    done = subprocess.run([sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "podman container" in done.stdout and "podman volume" in done.stdout, done.stdout
    assert podman_leftovers(proc.pid) == []
