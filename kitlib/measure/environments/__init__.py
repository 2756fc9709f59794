"""Environments by label: create one, or ask which ones this host offers and why not the others."""

from __future__ import annotations

import importlib
import os
import shutil
from dataclasses import dataclass

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import CommandResult, Environment, Layout, Service
from kitlib.measure.host import docker_runtimes
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.image import base_here
from kitlib.specs.labels import (
    IMAGE_KINDS,
    ROOTLESS_NETWORKS,
    EnvSpec,
    describe_label,
    known_labels,
    parse_label,
)

#: kind -> "module:Class"; more kinds (system containers, containers in a VM) register here.
_KINDS = {
    "native": "kitlib.measure.environments.native:NativeEnvironment",
    "docker": "kitlib.measure.environments.docker:DockerEnvironment",
    "vm": "kitlib.measure.environments.vm:VmEnvironment",
    "lxc": "kitlib.measure.environments.lxc:LxcEnvironment",
    "nspawn": "kitlib.measure.environments.nspawn:NspawnEnvironment",
    "podman": "kitlib.measure.environments.podman:PodmanEnvironment",
    "podman-rootless": "kitlib.measure.environments.podman:PodmanEnvironment",
    "docker-in-vm": "kitlib.measure.environments.docker_in_vm:DockerInVmEnvironment",
}


def environment_class(kind: str) -> type[Environment]:
    module, _, name = _KINDS[kind].partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise EnvironmentUnavailable(f"environment kind {kind!r} is not available in this kitlib: {exc}") from exc


def create(label: str, layout: Layout, *, run_label: str, peer_reaches_nat: bool, **kind_options) -> Environment:
    """An environment object for `label` (not started: use it as a context manager)."""
    spec = parse_label(label)
    if spec.kind in ("docker", "podman") and spec.network == "nat" and not peer_reaches_nat:
        raise EnvironmentUnavailable(
            f"{label}: the client would run on loopback and reach the published port through "
            "docker-proxy, not through NAT; a peer namespace (root) or a remote peer is needed"
        )
    cls = environment_class(spec.kind)
    if spec.kind == "native" and kind_options.get("host"):
        from kitlib.measure.environments.remote import RemoteNativeEnvironment

        cls = RemoteNativeEnvironment
        kind_options.pop("docker_socket", None)
    elif spec.kind == "docker" and kind_options.get("host"):
        from kitlib.measure.environments.remote_docker import RemoteDockerEnvironment

        cls = RemoteDockerEnvironment
    elif kind_options.get("host"):
        raise EnvironmentUnavailable(f"{label}: a remote system under test runs `native` and `docker-*` only")
    else:
        for name in ("host", "address", "key_filename", "known_hosts", "docker_socket", "local_client"):
            kind_options.pop(name, None)
    if spec.kind in IMAGE_KINDS:
        kind_options.setdefault("image", None)
        if kind_options["image"] is None:
            raise EnvironmentUnavailable(f"{label}: no benchmark image given")
    else:
        kind_options.pop("image", None)
        kind_options.pop("client", None)
        kind_options.pop("local_client", None)
    return cls(spec, layout, run_label=run_label, **kind_options)


@dataclass(frozen=True)
class Availability:
    label: str
    available: bool
    reason: str
    description: str


def availability() -> list[Availability]:
    """Every known label, whether this host can run it, and why (not)."""
    docker_ok, docker_reason = _docker_status()
    root = os.geteuid() == 0
    vm_status = _vm_status()
    rows = []
    for label in known_labels():
        spec = parse_label(label)
        kind, network, description = spec.kind, spec.network, describe_label(label)
        if kind == "native":
            ok, reason = True, "this host"
        elif kind == "docker":
            ok, reason = docker_ok, docker_reason
            if ok and network == "nat" and not root:
                ok, reason = False, "needs root for the peer namespace (loopback would measure docker-proxy, not NAT)"
            elif ok and network == "nat":
                reason += "; client in a peer namespace reaches it through DNAT"
        elif kind == "lxc":
            ok, reason = _lxc_status(docker_ok, docker_reason, root)
        elif kind in ("podman", "podman-rootless", "nspawn"):
            ok, reason = _kind_status(kind, spec)
        elif kind == "docker-in-vm":
            ok, reason = vm_status("qemu-tcg" if "qemu-tcg" in label else "kvm")
            if ok:
                reason = "Docker engine inside the VM guest; " + reason
        else:
            ok, reason = vm_status(label)
        rows.append(Availability(label, ok, reason, description))
        if label == RUNTIME_ROW_BASE and docker_ok:
            rows += _runtime_rows()
    return rows


#: the Docker label each registered OCI runtime is listed under (`kit envs`, `make reproduce`)
RUNTIME_ROW_BASE = "docker-host-volume"


def _runtime_rows() -> list[Availability]:
    """A row per OCI runtime the local engine lists: `docker-host-volume+runtime=NAME`, tried once."""
    rows = []
    for status in docker_runtimes.statuses(base_here(docker_client())):
        label = f"{RUNTIME_ROW_BASE}+runtime={status.name}"
        rows.append(Availability(label, status.usable, status.reason, describe_label(label)))
    for name, reason in docker_runtimes.missing_rows().items():
        label = f"{RUNTIME_ROW_BASE}+runtime={name}"
        rows.append(Availability(label, False, reason, describe_label(label)))
    return rows


def _kind_status(kind: str, spec: EnvSpec) -> tuple[bool, str]:
    """(available, reason) from the module of a kind that says itself what this host lacks for it."""
    module = _KINDS[kind].partition(":")[0]
    try:
        status = importlib.import_module(module).status
    except (ImportError, AttributeError) as exc:
        return False, f"not part of this kitlib ({exc})"
    return status(spec)


def availability_of(label: str) -> tuple[bool, str]:
    """(available, reason) for one label (with or without options): its base's row (a rootless
    network's own), and for `+runtime=NAME` also that runtime's."""
    spec = parse_label(label)
    rows = {row.label: row for row in availability()}
    base = spec.label.split("+")[0]
    mode = next((m for m in ROOTLESS_NETWORKS if spec.options.get(m)), None)
    row = rows[f"{base}+{mode}" if mode else base]
    runtime = spec.options.get("runtime")
    if not row.available or runtime is None:
        return row.available, row.reason
    runtime_row = rows.get(f"{RUNTIME_ROW_BASE}+runtime={runtime}")
    if runtime_row is None:
        return False, docker_runtimes.unregistered(runtime)
    return runtime_row.available, runtime_row.reason


def _lxc_status(docker_ok: bool, docker_reason: str, root: bool) -> tuple[bool, str]:
    if shutil.which("lxc-start") is None:
        return False, "LXC is not installed (apt-get install lxc)"
    if not root:
        return False, "needs root (lxc-start, and a routed veth the peer reaches)"
    if not docker_ok:
        return False, f"its root filesystem is unpacked from the benchmark image: {docker_reason}"
    return True, "LXC system container (systemd as init), reached from the peer namespace through a routed veth"


def _docker_status() -> tuple[bool, str]:
    try:
        client = docker_client()
    except EnvironmentUnavailable as exc:
        return False, str(exc)
    return True, f"Docker engine {client.version().get('Version')}"


def _vm_status():
    """A function label -> (available, reason) for VM labels; asks the VM package when present."""
    try:
        from kitlib.measure.vm.accel import vm_label_status
    except ImportError:
        qemu = shutil.which("qemu-system-x86_64")

        def fallback(label: str) -> tuple[bool, str]:
            return (
                False,
                "the VM environment is not part of this kitlib" if qemu else "qemu-system-x86_64 not installed",
            )

        return fallback
    return vm_label_status


__all__ = [
    "Availability",
    "CommandResult",
    "EnvSpec",
    "Environment",
    "Layout",
    "Service",
    "availability",
    "availability_of",
    "create",
    "describe_label",
    "known_labels",
    "parse_label",
]
