"""Faults below the run: the Docker daemon stopped mid-run, and a full disk under MariaDB.

The daemon stopped is a private one started for the test (its own data root, exec root, socket and
pid file, no bridge, no iptables rules), never the machine's shared engine; the run reaches it via
DOCKER_HOST. The full disk is a small ext4 image, loop-mounted, as the native scratch area."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

import kitlib
from kitlib.core.procs import owned_processes

from ..conftest import leftovers, missing, start_kit, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]


@pytest.fixture(scope="module")
def private_engine(docker_client, root_netns, bench_image):
    """A dockerd of the test's own (its own data root, exec root, socket, pid file and bridge, no
    iptables rules) holding the benchmark image; yields (DOCKER_HOST, its Popen)."""
    from kitlib.measure.image import LOCAL_BASE
    from kitlib.measure.vm.engine_store import private_engine as start_engine

    if shutil.which("dockerd") is None:
        missing("docker", "no dockerd binary to start a private engine with")
    root = Path(tempfile.mkdtemp(prefix="kitfaults-engine-", dir="/var/tmp"))
    try:
        with start_engine(root / "data") as (host, daemon):
            images = [bench_image] + ([LOCAL_BASE] if docker_client.images.list(name=LOCAL_BASE) else [])
            save = subprocess.Popen(["docker", "save", *images], stdout=subprocess.PIPE)
            subprocess.run(
                ["docker", "-H", host, "load", "-q"], stdin=save.stdout, check=True, timeout=600, capture_output=True
            )
            save.wait(timeout=60)
            yield host, daemon
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert docker_client.ping() and _bridge_exists("docker0"), "the machine's engine and its bridge are untouched"


def _bridge_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


@pytest.mark.extended  # a failing point among kept ones: the full disk under mariadb
@pytest.mark.timeout(1200)
def test_docker_daemon_stopped_mid_run_fails_docker_points_and_keeps_native_ones(
    docker_client, private_engine, isolated_dirs
):
    import docker

    host, daemon = private_engine
    engine = docker.DockerClient(base_url=host, timeout=60)
    results = isolated_dirs[0]
    envs, clients, requests = ["docker-host-volume", "native"], [1, 2], 100_000
    args = ["run", "redis", "--no-notebook", "--repetitions", "1", "--env", envs[0], "--env", envs[1]]
    proc = start_kit(
        args + ["-p", "clients", "[1, 2]", "-p", "requests", str(requests)],
        {
            "KIT_RESULTS": str(results),
            "DOCKER_HOST": host,
        },
    )

    def measuring_in_the_private_engine() -> bool:
        mine = engine.containers.list(filters={"label": f"org.kitlib.pid={proc.pid}"})
        generators = [c for _, who, c in owned_processes() if who == proc.pid and c.startswith("redis-benchmark")]
        return bool(mine) and bool(generators)

    wait_for(measuring_in_the_private_engine, 300, proc, "a Docker point measuring on the private engine")
    assert not docker_client.containers.list(filters={"label": f"org.kitlib.pid={proc.pid}"}), "not the shared one"
    stopped = time.monotonic()
    os.kill(daemon.pid, signal.SIGTERM)
    daemon.wait(timeout=120)
    output, _ = proc.communicate(timeout=600)
    took = time.monotonic() - stopped
    assert proc.returncode == 1, output
    plan = kitlib.plan("redis", environments=envs, repetitions=1, clients=clients, requests=requests)
    run_dir = results / "redis" / plan.run_id
    failures = pd.read_csv(run_dir / "failures.csv")
    assert set(failures["env"]) == {"docker-host-volume"} and len(failures) == 2, failures.to_dict("records")
    assert all(r.startswith("docker-host-volume: ") for r in failures["reason"]), "the engine's state is named"
    said = ("Docker engine does not answer", "is exited", "no longer exists")  # while, or after, it shuts down
    assert all(any(s in r for s in said) for r in failures["reason"]), failures["reason"].tolist()
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == {"native"} and set(records["clients"]) == set(clients), "native points kept"
    assert took < 400, f"the run took {took:.0f} s to end after the daemon stopped"
    left = [i for i in leftovers(docker_client, proc.pid) if not i.startswith("container")]
    assert left == []
    print(f"dockerd stopped: run ended {took:.0f} s later; nothing left on the host")
    print(failures.to_string())


@pytest.fixture
def small_disk():
    """A 160 MiB ext4 filesystem on a loop device: room for MariaDB to start, not for its data."""
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        missing("netns", "a loop-mounted filesystem needs root and mkfs.ext4")
    root = Path(tempfile.mkdtemp(prefix="kitfaults-disk-", dir="/var/tmp"))
    image, mount = root / "disk.img", root / "mnt"
    mount.mkdir()
    subprocess.run(["truncate", "-s", "160M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-m", "0", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.timeout(900)
def test_a_full_disk_under_mariadb_fails_the_point_with_its_error_and_keeps_earlier_records(
    docker_client, root_netns, bench_image, isolated_dirs, small_disk
):
    """docker-host-volume first (its volume is on the machine's disk: records), then native on the small
    disk: sysbench's prepare fills it and MariaDB answers that the table is full."""
    results = isolated_dirs[0]
    envs, rows = ["docker-host-volume", "native"], 400_000
    args = ["run", "mysql", "--no-notebook", "--repetitions", "1", "--env", envs[0], "--env", envs[1]]
    args += ["-p", "threads", "[1]", "-p", "rows", str(rows), "-p", "seconds", "2", "-p", "warmup_seconds", "0"]
    proc = start_kit(args, {"KIT_RESULTS": str(results), "KIT_SCRATCH": str(small_disk / "kitlib")})
    output, _ = proc.communicate(timeout=800)
    assert proc.returncode == 1, output
    plan = kitlib.plan("mysql", environments=envs, repetitions=1, threads=[1], rows=rows, seconds=2, warmup_seconds=0)
    run_dir = results / "mysql" / plan.run_id
    failures = pd.read_csv(run_dir / "failures.csv")
    assert list(failures["env"]) == ["native"], failures.to_dict("records")
    reason = failures["reason"][0]
    assert "is full" in reason or "No space left" in reason or "error 28" in reason.lower(), reason
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == {"docker-host-volume"} and (records["value"] >= 0).all(), "earlier records intact"
    units = {p.stem: json.loads(p.read_text()) for p in (run_dir / "units").glob("*.json")}
    native = [u for key, u in units.items() if "native" in key]
    assert native and all(u["status"] == "failed" and "records" not in u for u in native), "no partial record"
    assert leftovers(docker_client, proc.pid) == []
    print(f"full disk: {reason.splitlines()[0][:200]} / {reason.splitlines()[-1][:200]}")
