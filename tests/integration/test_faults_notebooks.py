"""Stopping runs on the notebook paths: SIGTERM to `kit run` (papermill, the default), and a real Jupyter
kernel interrupted, shut down or restarted (interrupt, shutdown request, SIGTERM, then SIGKILL) while a
run inside it measures. The kernel owns what its run starts: it must be removed, or found by `kit clean`."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kitlib import notebooks

from ..conftest import leftovers, start_kit, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

RUN_CELL = """
import kitlib
plan = kitlib.plan("redis", environments=["docker-nat-volume"], repetitions=1, clients=[1], requests=50_000_000)
from pathlib import Path
kitlib.run(plan, results_root=Path({results!r}), progress=False)
"""


def _running(docker_client, pid: int) -> bool:
    found = leftovers(docker_client, pid)
    return all(any(i.startswith(kind) for i in found) for kind in ("container", "netns", "process"))


def _kernel_of(proc: subprocess.Popen) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == proc.pid and b"ipykernel" in command:
            return int(entry.name)
    return None


@pytest.mark.timeout(500)
def test_sigterm_to_kit_run_through_papermill_stops_the_kernels_run(
    docker_client, root_netns, bench_image, isolated_dirs
):
    results, figures = isolated_dirs
    args = ["run", "redis", "--env", "docker-nat-volume", "--repetitions", "1"]
    args += ["-p", "clients", "[1]", "-p", "requests", "50000000"]
    proc = start_kit(args, {"KIT_RESULTS": str(results), "KIT_FIGURES": str(figures)})
    wait_for(lambda: _kernel_of(proc) is not None, 120, proc, "the notebook's kernel")
    kernel = _kernel_of(proc)
    wait_for(lambda: _running(docker_client, kernel), 300, proc, "the kernel's container, namespace and client")
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=notebooks.STOP_GRACE_S + 60)
    took = time.monotonic() - started
    assert proc.returncode == 143, output
    assert "stopped by SIGTERM" in output and "kit clean" in output, output
    assert leftovers(docker_client, kernel) == [], "the kernel removed what its run started"
    assert not Path(f"/proc/{kernel}").exists(), "the kernel is gone"
    print(f"papermill SIGTERM: nothing left, kit ended {took:.1f} s after the signal")


@pytest.fixture
def kernel(isolated_dirs):
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(Path(__file__).parents[2]))
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    yield manager, client, manager.provisioner.process.pid
    client.stop_channels()
    if manager.is_alive():
        manager.shutdown_kernel(now=True)


def _start_run(client, results: Path) -> str:
    return client.execute(RUN_CELL.format(results=str(results)))


def _reply(client, msg_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = client.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]
    raise AssertionError("no reply from the kernel in time")


@pytest.mark.timeout(400)
def test_interrupting_the_kernel_removes_everything(docker_client, root_netns, bench_image, isolated_dirs, kernel):
    manager, client, pid = kernel
    msg_id = _start_run(client, isolated_dirs[0])
    wait_for(lambda: _running(docker_client, pid), 300, what="the kernel's container, namespace and client")
    started = time.monotonic()
    manager.interrupt_kernel()
    reply = _reply(client, msg_id, 120)
    took = time.monotonic() - started
    assert reply["status"] == "error" and reply["ename"] in ("KeyboardInterrupt", "RunStopped"), reply
    assert leftovers(docker_client, pid) == []
    assert manager.is_alive(), "an interrupt leaves the kernel running"
    print(f"kernel interrupt: nothing left, clean-up {took:.1f} s")


@pytest.mark.timeout(400)
@pytest.mark.parametrize("action", ["shutdown", "restart"])
def test_shutting_down_or_restarting_the_kernel_leaves_nothing_kit_clean_cannot_remove(
    docker_client, root_netns, bench_image, isolated_dirs, kernel, action
):
    manager, client, pid = kernel
    _start_run(client, isolated_dirs[0])
    wait_for(lambda: _running(docker_client, pid), 300, what="the kernel's container, namespace and client")
    started = time.monotonic()
    if action == "shutdown":  # JupyterLab: interrupt, shutdown request, SIGTERM, then SIGKILL after 5 s
        manager.shutdown_kernel(now=False)
    else:
        manager.restart_kernel(now=False)
    took = time.monotonic() - started
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/status").read_text().count("zombie")
    left = leftovers(docker_client, pid)
    cleaned = ""
    if left:
        done = subprocess.run(
            [sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, text=True, timeout=120
        )
        cleaned = done.stdout.strip().splitlines()[-1]
    assert leftovers(docker_client, pid) == []
    print(f"kernel {action}: took {took:.1f} s; left {left or 'nothing'}; {cleaned}")
