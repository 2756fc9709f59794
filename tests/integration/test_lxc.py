"""The system-container environment: the benchmark image's root filesystem booting systemd under
LXC, reached from the peer namespace, and nothing left after a run, a failure or a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import kitlib
from kitlib.core import naming
from kitlib.measure import cpus, environments

from ..conftest import host_leftovers, missing, plan_session


def lxc_leftovers(owner_pid: int) -> list[str]:
    """Running containers (their LXC monitors), scratch folders, veths and FORWARD rules of `owner_pid`."""
    running = subprocess.run(["pgrep", "-af", "lxc monitor"], capture_output=True, text=True).stdout
    found = [f"monitor {line}" for line in running.splitlines() if f"/kit{owner_pid}x" in line]
    return found + host_leftovers(owner_pid, "kl")


@pytest.fixture(scope="module")
def lxc_image(docker_client, root_netns, bench_image):
    ok, reason = environments.availability_of("lxc")
    if not ok:
        missing("lxc", reason)
    return bench_image


@pytest.mark.slow
def test_system_container_boots_its_own_init_and_is_removed(lxc_image):
    layout = cpus.split(1, [])
    env = environments.create("lxc", layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=lxc_image)
    with env:
        assert lxc_leftovers(os.getpid()), "its folder, veth and rules exist while it runs"
        assert env.run(["cat", "/proc/1/comm"], timeout=30).output.strip() == "systemd"
        assert env.run(["nproc"], timeout=30).output.strip() == str(len(layout.sut_cpus))
        env.run(["sh", "-c", f"echo kept > {env.data_dir}/probe"], timeout=30)
        assert (env.local_dir / "shared" / "data" / "probe").read_text() == "kept\n", "data on a host directory"
        facts = env.describe()
        assert facts["init"] == "systemd" and 0 < facts["start_to_ready_s"] < 90
    assert lxc_leftovers(os.getpid()) == []


@pytest.mark.slow
def test_redis_runs_in_the_system_container_from_the_peer(lxc_image, isolated_dirs):
    plan = kitlib.plan("redis", environments=["lxc"], repetitions=1, clients=[1, 4], requests=5000)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    mix = result.records[(result.records["op"] == "mix") & (result.records["metric"] == "throughput")]
    assert len(mix) == 2 and set(mix["env"]) == {"lxc"} and (mix["value"] > 0).all()
    session = plan_session(result.root)
    assert session["peer"]["kind"] == "netns"
    assert session["environments"]["lxc"]["lxc_version"]
    assert "redis-server" in session["tool_versions"]["lxc"]
    # the run's own CPU is missing on LXC points, with why, never a number counted twice; other
    # processes' share does not rest on it: summed over their own times, it is a number and never below 0
    assert (result.records["foreign_cpu_pct"] >= 0).all() and result.records["steal_pct"].notna().all()
    unit = json.loads(next((result.root / "units").glob("redis__lxc__*.json")).read_text())
    assert "lxc-attach" in unit["interference"]["own_cpu_unknown"]
    assert unit["interference"]["figures"]["own_cpu_s"] is None
    assert lxc_leftovers(os.getpid()) == []


@pytest.mark.slow
def test_kit_clean_stops_a_system_container_a_killed_run_left(lxc_image, isolated_dirs):
    argv = [sys.executable, "-m", "kitlib.cli", "run", "redis", "--no-notebook", "--env", "lxc"]
    argv += ["--repetitions", "1", "-p", "clients", "[1]", "-p", "requests", "50000000"]
    proc = subprocess.Popen(argv, env={**os.environ, "KIT_RESULTS": str(isolated_dirs[0])}, text=True)
    deadline = time.monotonic() + 300
    while not any(item.startswith("monitor") for item in lxc_leftovers(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, "the system container did not start"
        time.sleep(0.5)
    time.sleep(3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert lxc_leftovers(proc.pid), "a SIGKILL leaves the container running"
    done = subprocess.run([sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "system container" in done.stdout
    assert lxc_leftovers(proc.pid) == []
