"""`kit clean`: remove what a killed run left behind, found by the labels and names it carries.

Only objects whose owning process is gone are touched, so a run in progress is left alone.
"""

from __future__ import annotations

import shutil

from kitlib.core import naming, paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import owned_processes, pid_alive
from kitlib.measure.environments.lxc import orphaned_containers
from kitlib.measure.host import commands, forwarding, stranded_shims
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.store import stale_temp_files


def _orphaned(name: str) -> bool:
    pid = naming.owner_pid(name)
    return pid is not None and not pid_alive(pid)


def clean_docker() -> list[str]:
    try:
        client = docker_client()
    except EnvironmentUnavailable:
        return []
    removed = []
    for container in client.containers.list(all=True, filters={"label": naming.LABEL_RUN}):
        pid = int(container.labels.get(naming.LABEL_PID, "0") or 0)
        if pid and pid_alive(pid):
            continue
        container.remove(force=True, v=True)
        removed.append(f"container {container.name}")
    for volume in client.volumes.list(filters={"label": naming.LABEL_RUN}):
        pid = int((volume.attrs.get("Labels") or {}).get(naming.LABEL_PID, "0") or 0)
        if pid and pid_alive(pid):
            continue
        volume.remove(force=True)
        removed.append(f"volume {volume.name}")
    return removed + stranded_shims.release_all(client)


def clean_processes() -> list[str]:
    """Servers and load generators a dead run started on this host (marked KITLIB_OWNER), wherever
    they run: in a peer namespace already deleted, on loopback, or as a native service."""
    import os
    import signal

    removed = []
    for pid, owner, command in owned_processes():
        if pid_alive(owner) or pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        removed.append(f"process {pid} ({command[:80]}) of run pid {owner}")
    return removed


def clean_namespaces() -> list[str]:
    """Peer namespaces of dead runs, and the load generators still running in them."""
    removed = []
    namespaces = commands.run(["ip", "netns", "list"]).stdout
    for line in namespaces.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith(naming.PREFIX) and _orphaned(name):
            pids = commands.run(["ip", "netns", "pids", name]).stdout.split()
            for pid in pids:  # clients a killed run left behind in its peer namespace
                commands.run(["kill", "-KILL", pid])
                removed.append(f"process {pid} in netns {name}")
            commands.run(["ip", "netns", "del", name])
            removed.append(f"netns {name}")
    return removed


def clean_links() -> list[str]:
    """veths and taps of dead runs, and the FORWARD rules that let the peer reach them."""
    removed = []
    for rule in forwarding.orphaned(_orphaned):
        forwarding.remove(rule)
        removed.append(f"iptables rule {' '.join(rule)}")
    links = commands.run(["ip", "-o", "link", "show"]).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith("k") and _orphaned(name):
            commands.run(["ip", "link", "del", name])
            removed.append(f"link {name}")
    return removed


def clean_scratch() -> list[str]:
    root = paths.scratch_root()
    removed = []
    if root.exists():
        for entry in root.iterdir():
            if _orphaned(entry.name):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(f"scratch {entry}")
    return removed


def clean_temp_files() -> list[str]:
    """Half-written files of killed writers in the results folders (`.<name>.<random>` beside the file
    they were to replace); the folders of runs in progress are left alone."""
    removed = []
    for path in stale_temp_files(paths.results_root()):
        path.unlink(missing_ok=True)
        removed.append(f"temp file {path}")
    return removed


def clean_system_containers() -> list[str]:
    removed = []
    for lxcpath, name in orphaned_containers(_orphaned):
        commands.run(["lxc-stop", "-P", lxcpath, "-n", name, "-k"])
        removed.append(f"system container {name}")
    return removed


def clean_vms() -> list[str]:
    try:
        from kitlib.measure.vm import cleanup_leftovers
    except ImportError:
        return []
    return cleanup_leftovers()


def clean_kind(module: str) -> list[str]:
    """What an environment kind's own module finds its killed runs left (`clean_leftovers` there)."""
    import importlib

    try:
        clean = importlib.import_module(f"kitlib.measure.environments.{module}").clean_leftovers
    except (ImportError, AttributeError):
        return []
    return clean()


def clean_leftovers() -> list[str]:
    # the peer namespaces first: their load generators stop before the servers they talk to disappear;
    # VMs and system containers before links: a tap or veth goes once its user has exited
    return (
        clean_processes()
        + clean_namespaces()
        + clean_vms()
        + clean_system_containers()
        + clean_kind("nspawn")
        + clean_kind("podman")
        + clean_links()
        + clean_docker()
        + clean_scratch()
        + clean_temp_files()
    )
