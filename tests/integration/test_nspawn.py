"""The systemd-nspawn environment: the benchmark image's root filesystem booting systemd under
systemd-nspawn, reached from the peer namespace, its CPU counted once, and nothing left after a
run, a failure or a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import kitlib
from kitlib.core import interference, naming
from kitlib.measure import cpus, environments
from kitlib.measure.environments import nspawn

from ..conftest import host_leftovers, missing, plan_session

#: a shell loop busy until it has had 1.5 s of CPU (at most 20 s), printing its own CPU ticks and its
#: reaped children's (the `date`s and `cut`s it ran)
BUSY = (
    "end=$(($(date +%s)+20)); ticks() { cut -d' ' -f14-17 /proc/$$/stat; }; "
    "while [ $(date +%s) -lt $end ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; "
    "set -- $(ticks); [ $(($1+$2+$3+$4)) -ge $((150*$(getconf CLK_TCK)/100)) ] && break; done; ticks"
)


def nspawn_leftovers(owner_pid: int) -> list[str]:
    """Machines, cgroups, network namespaces, scratch folders, veths and FORWARD rules of `owner_pid`."""
    running = subprocess.run(["pgrep", "-af", "systemd-nspawn"], capture_output=True, text=True).stdout
    found = [f"machine {line}" for line in running.splitlines() if f"--machine=kit{owner_pid}x" in line]
    for parent in {group.parent for group in nspawn.machine_cgroups("x")}:
        found += [f"cgroup {g}" for g in parent.glob(f"kit{owner_pid}x*{nspawn.SUFFIX}")]
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += [f"netns {line}" for line in netns.splitlines() if line.startswith(f"kit{owner_pid}x")]
    return found + host_leftovers(owner_pid, "kn")


@pytest.fixture(scope="module")
def nspawn_image(docker_client, root_netns, bench_image):
    ok, reason = environments.availability_of("nspawn")
    if not ok:
        missing("nspawn", reason)
    return bench_image


@pytest.mark.slow
def test_machine_boots_systemd_on_pinned_cpus_and_is_removed(nspawn_image):
    layout = cpus.split(1, [])
    env = environments.create(
        "nspawn", layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=nspawn_image
    )
    with env:
        assert nspawn_leftovers(os.getpid()), "its machine, folder, veth and rules exist while it runs"
        assert env.run(["cat", "/proc/1/comm"], timeout=30).output.strip() == "systemd"
        assert env.run(["nproc"], timeout=30).output.strip() == str(len(layout.sut_cpus))
        pinned = env.run(["taskset", "-pc", "1"], timeout=30, cpus=[]).output  # the container's init itself
        assert pinned.strip().endswith(": " + ",".join(map(str, layout.sut_cpus)))
        env.run(["sh", "-c", f"echo kept > {env.data_dir}/probe"], timeout=30)
        assert (env.local_dir / "shared" / "data" / "probe").read_text() == "kept\n", "data on a host directory"
        facts = env.describe()
        assert facts["init"] == "systemd" and 0 < facts["start_to_ready_s"] < nspawn.READY_TIMEOUT_S
        assert facts["nspawn_version"].startswith("systemd ") and facts["address"] == env.address
        assert facts["cpu_affinity"] == ",".join(map(str, layout.sut_cpus))
    assert nspawn_leftovers(os.getpid()) == []


@pytest.mark.slow
def test_cpu_of_the_machine_counts_once_as_the_runs_own(nspawn_image):
    """A command's processes are descendants of this process (nsenter's children) and are counted
    by the process tree alone, never by a cgroup besides, so its foreign CPU is a true number."""
    layout = cpus.split(1, [])
    env = environments.create(
        "nspawn", layout, run_label=naming.new_run_label(), peer_reaches_nat=True, image=nspawn_image
    )
    with env:
        with interference.PointSampler(layout.sut_cpus, interference.Ownership()) as sampler:
            output = env.run(["sh", "-c", BUSY], timeout=60).output
    busy = sum(int(ticks) for ticks in output.split()[-4:]) / os.sysconf("SC_CLK_TCK")
    assert busy >= 1.5, output
    own = sampler.figures.own_cpu_s  # counted twice, it would read 3 s and more
    assert busy * 0.9 - 0.1 <= own <= busy * 1.2 + 0.5, (busy, sampler.figures)


@pytest.mark.slow
def test_redis_runs_in_the_machine_from_the_peer(nspawn_image, isolated_dirs):
    plan = kitlib.plan("redis", environments=["nspawn"], repetitions=1, clients=[1, 4], requests=5000)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    mix = result.records[(result.records["op"] == "mix") & (result.records["metric"] == "throughput")]
    assert len(mix) == 2 and set(mix["env"]) == {"nspawn"} and (mix["value"] > 0).all()
    session = plan_session(result.root)
    assert session["peer"]["kind"] == "netns"
    facts = session["environments"]["nspawn"]
    assert facts["nspawn_version"] and facts["init"] == "systemd" and facts["start_to_ready_s"] > 0
    assert "redis-server" in session["tool_versions"]["nspawn"]
    assert result.records["steal_pct"].notna().all()
    unit = json.loads(next((result.root / "units").glob("redis__nspawn__*.json")).read_text())
    assert unit["interference"]["own_cpu_unknown"] is None
    assert nspawn_leftovers(os.getpid()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("experiment", "sizes", "metric"),
    [
        ("net", {"preset": "seed003-rr", "seconds": 1}, "rtt_mean"),
        ("block", {"file_mb": 32, "runtime": 1, "iodepth": 8, "workloads": ["rand_read"]}, "iops"),
        ("startup", {}, "start_to_ready"),
    ],
)
def test_quick_runs_on_the_machine(experiment, sizes, metric, nspawn_image, isolated_dirs):
    plan = kitlib.plan(experiment, environments=["nspawn"], repetitions=1, **sizes)
    result = kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    values = result.records[result.records["metric"] == metric]
    assert len(values) and set(values["env"]) == {"nspawn"} and (values["value"] > 0).all()
    session = plan_session(result.root)
    assert session["environments"]["nspawn"]["address"]
    assert nspawn_leftovers(os.getpid()) == []


@pytest.mark.slow
def test_kit_clean_stops_a_machine_a_killed_run_left(nspawn_image, isolated_dirs):
    argv = [sys.executable, "-m", "kitlib.cli", "run", "redis", "--no-notebook", "--env", "nspawn"]
    argv += ["--repetitions", "1", "-p", "clients", "[1]", "-p", "requests", "50000000"]
    proc = subprocess.Popen(argv, env={**os.environ, "KIT_RESULTS": str(isolated_dirs[0])}, text=True)
    deadline = time.monotonic() + 300
    while not any(item.startswith("machine") for item in nspawn_leftovers(proc.pid)):
        assert proc.poll() is None and time.monotonic() < deadline, "the machine did not start"
        time.sleep(0.5)
    time.sleep(3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert nspawn_leftovers(proc.pid), "a SIGKILL leaves the machine running"
    done = subprocess.run([sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert nspawn_leftovers(proc.pid) == []
    assert f"kit{proc.pid}x" in done.stdout, done.stdout
