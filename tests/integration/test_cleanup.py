"""Nothing is left behind: after an exception inside a run, after SIGINT, and `kit clean` after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import kitlib
from kitlib.core.procs import owned_processes
from kitlib.measure.experiments.redis import RedisWorkload

from ..conftest import leftovers, start_kit

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]


def test_exception_inside_a_run_removes_everything(docker_client, root_netns, bench_image, isolated_dirs, monkeypatch):
    seen: list[str] = []

    def failing_measure(self, env, peer, point):  # fault injection: the run itself is real
        seen.extend(leftovers(docker_client, os.getpid()))
        raise RuntimeError("injected failure inside a running experiment")

    monkeypatch.setattr(RedisWorkload, "measure", failing_measure)
    plan = kitlib.plan("redis", environments=["docker-nat-volume"], repetitions=1, clients=[1], requests=2000)
    with pytest.raises(RuntimeError, match="injected failure"):
        kitlib.run(plan, results_root=isolated_dirs[0], progress=False)
    assert any(item.startswith("container") for item in seen), "the environment was running when it failed"
    assert any(item.startswith("netns") for item in seen)
    assert leftovers(docker_client, os.getpid()) == []


def _start_long_run(results) -> subprocess.Popen:
    args = ["run", "redis", "--no-notebook", "--env", "docker-nat-volume", "--repetitions", "1"]
    return start_kit(args + ["-p", "clients", "[1]", "-p", "requests", "50000000"], {"KIT_RESULTS": str(results)})


def _wait_until_running(docker_client, proc: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = leftovers(docker_client, proc.pid)
        generating = any(who == proc.pid and cmd.startswith("redis-benchmark") for _, who, cmd in owned_processes())
        if any(i.startswith("container") for i in found) and any(i.startswith("netns") for i in found) and generating:
            return  # the environment, the peer and its load generator are all running
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.5)
    proc.kill()
    pytest.fail("the run did not start its environment in time")


def test_sigint_removes_everything(docker_client, root_netns, bench_image, isolated_dirs):
    proc = _start_long_run(isolated_dirs[0])
    _wait_until_running(docker_client, proc)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, output
    assert "stopped by SIGINT" in output
    assert leftovers(docker_client, proc.pid) == []


def test_kit_clean_removes_what_a_killed_run_left(docker_client, root_netns, bench_image, isolated_dirs):
    proc = _start_long_run(isolated_dirs[0])
    _wait_until_running(docker_client, proc)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    left = leftovers(docker_client, proc.pid)
    assert any(i.startswith("container") for i in left) and any(i.startswith("netns") for i in left)
    done = subprocess.run([sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "leftover(s) removed" in done.stdout
    assert leftovers(docker_client, proc.pid) == []
    assert "process" in done.stdout, "the load generator left in the namespace was stopped too"
