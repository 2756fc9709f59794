"""The other ways a long run ends: SIGTERM and SIGHUP, a second signal during clean-up, a killed server
or load generator, kill -9 and a rerun, two runs of one plan at once. Real engine, real namespaces.

Each test says what was left after the fault, how long clean-up took and what the run folder holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import kitlib
from kitlib.core.procs import owned_processes

from ..conftest import leftovers, plan_session, start_kit, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]


def _redis_args(
    envs: list[str], clients: str, requests: int | None = None, order: str = "interleaved", seconds: float = 2.0
) -> list[str]:
    """A Redis run of fixed `requests` per phase, or of `seconds` per phase (as long on any machine)."""
    args = ["run", "redis", "--no-notebook", "--repetitions", "1", "--order", order]
    for env in envs:
        args += ["--env", env]
    length = ["-p", "requests", str(requests)] if requests else ["-p", "seconds", str(seconds)]
    return args + ["-p", "clients", clients, *length]


def _run_dir(
    results: Path,
    envs: list[str],
    clients: list[int],
    requests: int | None = None,
    order: str = "interleaved",
    seconds: float | None = None,
) -> Path:
    length = {"requests": requests} if requests else {"seconds": seconds}
    plan = kitlib.plan("redis", environments=envs, repetitions=1, clients=clients, order=order, **length)
    return results / "redis" / plan.run_id


def _load_generators(owner: int, needle: str = "redis-benchmark") -> list[int]:
    return [pid for pid, who, command in owned_processes() if who == owner and command.startswith(needle)]


def _running(docker_client, proc: subprocess.Popen) -> bool:
    """The run's container, peer namespace and load generator all exist."""
    found = leftovers(docker_client, proc.pid)
    return (
        any(i.startswith("container") for i in found)
        and any(i.startswith("netns") for i in found)
        and bool(_load_generators(proc.pid))
    )


def _stop_and_measure(proc: subprocess.Popen, signals: list[signal.Signals], gap: float = 0.0) -> tuple[str, float]:
    started = time.monotonic()
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(gap)
    output, _ = proc.communicate(timeout=120)
    return output, time.monotonic() - started


@pytest.mark.timeout(400)
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.extended)])
def test_sigterm_and_sighup_remove_everything_like_ctrl_c(docker_client, root_netns, bench_image, isolated_dirs, sig):
    results = isolated_dirs[0]
    proc = start_kit(_redis_args(["docker-nat-volume"], "[1]", 50_000_000), {"KIT_RESULTS": str(results)})
    wait_for(lambda: _running(docker_client, proc), 240, proc, "the container, namespace and load generator")
    output, took = _stop_and_measure(proc, [sig])
    assert proc.returncode == 128 + sig, output
    assert f"stopped by {sig.name}" in output and "kit clean" in output, output
    assert leftovers(docker_client, proc.pid) == []
    run_dir = _run_dir(results, ["docker-nat-volume"], [1], 50_000_000)
    assert pd.read_csv(run_dir / "records.csv").empty, "no point finished, none is recorded"
    assert not (run_dir / "units").exists() or not list((run_dir / "units").glob("*.json"))
    print(f"{sig.name}: nothing left, clean-up {took:.1f} s")


@pytest.mark.timeout(400)
def test_signals_during_clean_up_do_not_cut_it_short(docker_client, root_netns, bench_image, isolated_dirs):
    proc = start_kit(_redis_args(["docker-nat-volume"], "[1]", 50_000_000), {"KIT_RESULTS": str(isolated_dirs[0])})
    wait_for(lambda: _running(docker_client, proc), 240, proc, "the container, namespace and load generator")
    output, took = _stop_and_measure(proc, [signal.SIGTERM, signal.SIGINT, signal.SIGTERM, signal.SIGHUP], gap=0.2)
    assert proc.returncode == 143, output
    assert "clean-up continues" in output, output
    assert leftovers(docker_client, proc.pid) == []
    print(f"four signals: nothing left, clean-up {took:.1f} s")


@pytest.mark.extended  # a failed point among kept ones: the full disk under mariadb
@pytest.mark.timeout(600)
def test_a_killed_load_generator_and_a_killed_server_fail_their_points_and_the_run_goes_on(
    docker_client, root_netns, bench_image, isolated_dirs
):
    results = isolated_dirs[0]
    # blocked order: both Docker points come first, in the order listed, whatever the machine; each
    # phase lasts `seconds` however fast the machine, so the second point is caught in flight
    envs, seconds = ["docker-host-volume", "native"], 6.0
    proc = start_kit(_redis_args(envs, "[1, 2]", order="blocked", seconds=seconds), {"KIT_RESULTS": str(results)})

    def generator_of(clients: int) -> list[int]:
        return [
            pid
            for pid, who, command in owned_processes()
            if who == proc.pid and command.startswith("redis-benchmark") and f" -c {clients} " in command
        ]

    wait_for(lambda: generator_of(1), 240, proc, "the first point's load generator")
    for pid in generator_of(1):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: generator_of(2), 240, proc, "the second point")
    # held while its server is killed, so the point cannot finish first however fast the machine is
    held = generator_of(2)
    for pid in held:
        os.kill(pid, signal.SIGSTOP)
    container = docker_client.containers.list(filters={"label": f"org.kitlib.pid={proc.pid}"})[0]
    subprocess.run(["docker", "kill", container.id], capture_output=True, check=True, timeout=60)
    for pid in held:
        os.kill(pid, signal.SIGCONT)
    killed = time.monotonic()
    output, _ = proc.communicate(timeout=400)
    assert proc.returncode == 1, output
    assert "2 failed points" in output, output
    run_dir = _run_dir(results, envs, [1, 2], order="blocked", seconds=seconds)
    failures = pd.read_csv(run_dir / "failures.csv")
    assert set(failures["env"]) == {"docker-host-volume"} and len(failures) == 2
    reasons = " ".join(failures["reason"])
    assert "redis-benchmark" in reasons and "exited -9" in reasons, reasons
    assert "docker-host-volume: its container" in reasons and "is exited (exit code 137)" in reasons, reasons
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == {"native"} and set(records["clients"]) == {1, 2}, "the run went on"
    assert leftovers(docker_client, proc.pid) == []
    print(f"after the kills: nothing left; run ended {time.monotonic() - killed:.0f} s after the docker kill")
    print(failures.to_string())


@pytest.mark.extended  # a rerun measuring only what is missing: the redis notebook that resumes
@pytest.mark.timeout(600)
def test_kill_9_then_rerun_measures_only_the_missing_points(docker_client, root_netns, isolated_dirs):
    results = isolated_dirs[0]
    clients, seconds = [1, 2, 4], 3.0  # a point lasts two phases of `seconds` on any machine
    args = _redis_args(["native"], json.dumps(clients), seconds=seconds)
    run_dir = _run_dir(results, ["native"], clients, seconds=seconds)
    proc = start_kit(args, {"KIT_RESULTS": str(results)})

    def done_units() -> list[Path]:
        units = run_dir / "units"
        return (
            [p for p in units.glob("*.json") if json.loads(p.read_text())["status"] == "ok"] if units.exists() else []
        )

    held: list[int] = []

    def hold_a_later_point() -> bool:
        """Stop the load generator of a point after the first, so it is still there when the run is
        killed however soon its phase would end."""
        if not done_units():
            return False
        for pid in _load_generators(proc.pid):
            try:
                os.kill(pid, signal.SIGSTOP)
                held.append(pid)
            except ProcessLookupError:
                continue
        return any(Path(f"/proc/{pid}").exists() for pid in held)

    wait_for(hold_a_later_point, 300, proc, "a second point in progress")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    first = {p.name: p.read_text() for p in done_units()}
    assert 1 <= len(first) < len(clients)
    if (run_dir / "records.csv").exists():  # written atomically: absent or whole, never half
        pd.read_csv(run_dir / "records.csv")
    left = leftovers(docker_client, proc.pid)
    assert any("redis-server" in i for i in left) and any("redis-benchmark" in i for i in left), left
    cleaned = subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=120, check=True
    )
    assert leftovers(docker_client, proc.pid) == []
    print(f"after kill -9: {left}; kit clean: {cleaned.stdout.strip()}")

    again = start_kit(args, {"KIT_RESULTS": str(results)})
    output, _ = again.communicate(timeout=400)
    assert again.returncode == 0, output
    assert {p.name: p.read_text() for p in done_units() if p.name in first} == first, "done points kept as they were"
    assert len(done_units()) == len(clients)
    session = plan_session(run_dir)
    assert session["plan"]["environments"] == ["native"]
    records = pd.read_csv(run_dir / "records.csv")
    assert not records.drop(columns=["value"]).duplicated().any(), "no record appears twice"
    assert set(records["clients"]) == set(clients)
    assert leftovers(docker_client, again.pid) == []
    print(f"rerun measured {len(clients) - len(first)} missing point(s); records.csv has {len(records)} rows")


@pytest.mark.timeout(400)
def test_a_second_run_of_the_same_plan_refuses_while_the_first_runs(docker_client, root_netns, isolated_dirs):
    results = isolated_dirs[0]
    args = _redis_args(["native"], "[1]", 50_000_000)
    first = start_kit(args, {"KIT_RESULTS": str(results)})
    wait_for(lambda: _load_generators(first.pid), 240, first, "the first run's load generator")
    second = start_kit(args, {"KIT_RESULTS": str(results)})
    output, _ = second.communicate(timeout=120)
    assert second.returncode == 2, output
    assert "another run of this plan is in progress" in output and str(first.pid) in output, output
    assert first.poll() is None, "the first run goes on"
    output, took = _stop_and_measure(first, [signal.SIGTERM])
    assert first.returncode == 143, output
    assert leftovers(docker_client, first.pid) == [] and leftovers(docker_client, second.pid) == []
    print(f"second run refused: {output.strip().splitlines()[-1][:120]}; first stopped in {took:.1f} s")
