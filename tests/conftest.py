"""Shared fixtures: a real Docker engine, root for namespaces, and checks that nothing is left behind.

Where a requirement is missing the test is skipped, unless KIT_REQUIRE names it (make test sets
KIT_REQUIRE=docker,netns,vm,lxc,slurm,runtimes,nspawn,podman as root), in which case the missing
requirement is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kitlib.core import naming

REQUIRED = set(filter(None, os.environ.get("KIT_REQUIRE", "").split(",")))
DATA = Path(__file__).parent / "data"


def missing(what: str, reason: str):
    """Skip for want of `what`, or fail where KIT_REQUIRE says it must be there."""
    if what in REQUIRED:
        pytest.fail(f"{what} is required here (KIT_REQUIRE) but unavailable: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    from kitlib.core.errors import EnvironmentUnavailable
    from kitlib.measure.host.docker_engine import docker_client as connect

    try:
        return connect()
    except EnvironmentUnavailable as exc:
        missing("docker", str(exc))


@pytest.fixture(scope="session")
def root_netns():
    """Root for namespaces; the namespace hosts an earlier, killed session left are removed first."""
    if os.geteuid() != 0:
        missing("netns", "network namespaces need root")
    from .support.namespace_host import clean_orphans

    clean_orphans()


@pytest.fixture(scope="session")
def bench_image(docker_client):
    from kitlib.measure.image import ensure_image

    return ensure_image(docker_client)


@pytest.fixture
def isolated_dirs(tmp_path, monkeypatch):
    """Results and figures of the test go to tmp_path, never into the project folders."""
    results, figures = tmp_path / "results", tmp_path / "figures"
    monkeypatch.setenv("KIT_RESULTS", str(results))
    monkeypatch.setenv("KIT_FIGURES", str(figures))
    return results, figures


def leftovers(docker_client, pid: int | None = None) -> list[str]:
    """Containers, volumes and namespaces the kit made and left: those of one owning process if `pid`
    is given, else those whose owner has exited (a notebook kernel, a killed run). Objects of other
    runs still in progress on this machine are not counted."""
    from kitlib.core.procs import pid_alive

    def counted(owner: int | None) -> bool:
        if owner is None:
            return False
        return owner == pid if pid is not None else not pid_alive(owner)

    found = []
    for container in docker_client.containers.list(all=True, filters={"label": naming.LABEL_RUN}):
        if counted(int(container.labels.get(naming.LABEL_PID, "0") or 0)):
            found.append(f"container {container.name}")
    for volume in docker_client.volumes.list(filters={"label": naming.LABEL_RUN}):
        if counted(int((volume.attrs.get("Labels") or {}).get(naming.LABEL_PID, "0") or 0)):
            found.append(f"volume {volume.name}")
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    for name in netns:
        if name.startswith(naming.PREFIX) and counted(naming.owner_pid(name)):
            found.append(f"netns {name}")
    return found + process_leftovers(counted)


def process_leftovers(counted) -> list[str]:
    """Processes of a run still running: the load generators and servers it started on this host
    (they carry its pid in KITLIB_OWNER, even after their namespace is gone) and its QEMU guests."""
    from kitlib.core.procs import owned_processes
    from kitlib.measure.vm import qemu_processes

    found = [f"process {pid} {command[:60]}" for pid, owner, command in owned_processes() if counted(owner)]
    found += [f"qemu {pid} {name}" for pid, name in qemu_processes() if counted(naming.owner_pid(name))]
    return found


#: the kit processes the running test started, stopped after it if it failed before they ended
_STARTED: list[subprocess.Popen] = []


def start_kit(args: list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """`kit ARGS` as a child with SIGINT, SIGTERM and SIGHUP at their defaults, whatever this test
    process inherited (a background job of a non-interactive shell ignores SIGINT), so the signals a
    test sends act as they do from a terminal; stdout and stderr together, as text."""
    import sys

    from kitlib.core.signals import default_dispositions

    proc = subprocess.Popen(
        [sys.executable, "-m", "kitlib.cli", *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        preexec_fn=default_dispositions,
        **kwargs,
    )
    _STARTED.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _no_kit_run_outlives_its_test():
    """A test that fails half-way leaves no run of the kit behind: SIGTERM, the kit's own clean-up
    (bounded), then SIGKILL."""
    yield
    owners = {proc.pid for proc in _STARTED}
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is not None:
            continue
        proc.terminate()
        try:
            proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=30)
    _clean_after_killed_runs(owners)


def _clean_after_killed_runs(owners: set[int]) -> None:
    """What a run killed by its test left (a kill -9 whose test failed before `kit clean`) is removed,
    so one failure does not become the next tests' leftovers."""
    import sys

    if not owners:
        return
    try:
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    except FileNotFoundError:  # no iproute2: no namespaces either
        netns = []
    left = any(naming.owner_pid(name) in owners for name in netns if name.startswith(naming.PREFIX))
    left = left or bool(process_leftovers(lambda owner: owner in owners))
    if left:
        subprocess.run([sys.executable, "-m", "kitlib.cli", "clean"], capture_output=True, timeout=300)


def wait_for(condition, timeout: float, proc: subprocess.Popen | None = None, what: str = "condition") -> None:
    """Poll `condition()` every half second up to `timeout` s; fail early if `proc` has exited."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the run exited ({proc.returncode}) before {what}:\n{proc.stdout.read()[-3000:]}")
        if time.monotonic() > deadline:
            if proc is not None:
                proc.kill()
            pytest.fail(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.5)


def host_leftovers(owner_pid: int, link_prefix: str) -> list[str]:
    """Scratch folders, network links named `link_prefix…` and FORWARD rules made by `owner_pid`
    (what VMs and system containers leave on the host besides their own processes)."""
    from kitlib.core import paths

    found = []
    if paths.scratch_root().exists():
        found += [f"scratch {p.name}" for p in paths.scratch_root().iterdir() if naming.owner_pid(p.name) == owner_pid]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if name.startswith(link_prefix) and naming.owner_pid(name) == owner_pid:
            found.append(f"link {name}")
    rules = subprocess.run(["iptables", "-w", "-S", "FORWARD"], capture_output=True, text=True).stdout
    found += [f"rule {line}" for line in rules.splitlines() if f"kitlib:kit{owner_pid}x" in line]
    return found


@pytest.fixture(autouse=True)
def _no_process_of_this_test_left():
    """After every test: no server, load generator or guest that a run inside this pytest process
    started is still running (runs in child processes are checked by their tests, by the child's pid)."""
    yield
    me = os.getpid()
    left = process_leftovers(lambda owner: owner == me)
    if left:
        import time

        time.sleep(2)  # a process group being stopped at this instant
        left = process_leftovers(lambda owner: owner == me)
    assert left == [], f"processes a run of this test started are still running: {left}"


@pytest.fixture(scope="module")
def namespace_host(root_netns, docker_client):
    """A second machine made of real parts (`tests.support.namespace_host.NamespaceHost`): its own address, sshd
    and Docker engine; reached by the tests only over SSH. After the module nothing of it is left."""
    from kitlib.core.errors import EnvironmentUnavailable

    from .support.namespace_host import NamespaceHost

    host = NamespaceHost()
    try:
        host.start()
    except EnvironmentUnavailable as exc:
        host.stop()
        missing("netns", f"no namespace host: {exc}")
    try:
        yield host
    finally:
        host.stop()
    assert host.leftovers() == [], f"the namespace host left: {host.leftovers()}"


@pytest.fixture(scope="module")
def client_host(namespace_host):
    """A third machine for the load generator: a namespace host with sshd only, letting in the same key."""
    from .support.namespace_host import NamespaceHost

    host = NamespaceHost(docker=False, authorize=(namespace_host.key + ".pub",))
    try:
        host.start()
        yield host
    finally:
        host.stop()
    assert host.leftovers() == [], f"the client host left: {host.leftovers()}"


def write_inventory(host, folder: Path, known_hosts: str | None = None, client=None) -> Path:
    """An inventory (kitlib.measure.inventory) naming `host` as the system under test, the client being here, or
    the namespace host `client` (then both hosts' keys are in one known_hosts file, one client key)."""
    path = folder / "study.toml"
    text = (
        f'[ssh]\nkey = "{host.key}"\nknown_hosts = "{known_hosts or host.known_hosts}"\n\n'
        f'[sut]\nhost = "{host.address}"\nuser = "root"\nport = 22\n'
    )
    if client is not None:
        pinned = folder / "known_hosts"
        pinned.write_text(Path(host.known_hosts).read_text() + Path(client.known_hosts).read_text())
        text = text.replace(known_hosts or host.known_hosts, str(pinned))
        text += f'\n[client]\nhost = "{client.address}"\nuser = "root"\n'
    path.write_text(text)
    return path


def plan_session(run_root: Path) -> dict:
    """The provenance of the session that measured the plan's own points: the run's end may add one that
    measured points again (a session with a `purpose`), which starts only the environments it needs."""
    sessions = json.loads((run_root / "provenance.json").read_text())["sessions"]
    return [s for s in sessions if "purpose" not in s][-1]
