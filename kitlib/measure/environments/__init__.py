"""Environments by label: create one, or ask which ones this host offers and why not the others."""

from __future__ import annotations

import importlib
import os
import shutil
from dataclasses import dataclass

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import CommandResult, Environment, Layout, Service
from kitlib.specs.labels import BASE_LABELS, IMAGE_KINDS, EnvSpec, describe_label, known_labels, parse_label

#: kind -> "module:Class"; more kinds (system containers, containers in a VM) register here.
_KINDS = {
    "native": "kitlib.measure.environments.native:NativeEnvironment",
    "docker": "kitlib.measure.environments.docker:DockerEnvironment",
    "vm": "kitlib.measure.environments.vm:VmEnvironment",
    "lxc": "kitlib.measure.environments.lxc:LxcEnvironment",
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
    if spec.kind == "docker" and spec.network == "nat" and not peer_reaches_nat:
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
        kind, network, _, description = BASE_LABELS[label]
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
        elif kind == "docker-in-vm":
            ok, reason = vm_status("qemu-tcg" if "qemu-tcg" in label else "kvm")
            if ok:
                reason = "Docker engine inside the VM guest; " + reason
        else:
            ok, reason = vm_status(label)
        rows.append(Availability(label, ok, reason, description))
    return rows


def availability_of(label: str) -> tuple[bool, str]:
    """(available, reason) for one label (with or without options)."""
    base = parse_label(label).label.split("+")[0]
    row = next(row for row in availability() if row.label == base)
    return row.available, row.reason


def _lxc_status(docker_ok: bool, docker_reason: str, root: bool) -> tuple[bool, str]:
    if shutil.which("lxc-start") is None:
        return False, "LXC is not installed (apt-get install lxc)"
    if not root:
        return False, "needs root (lxc-start, and a routed veth the peer reaches)"
    if not docker_ok:
        return False, f"its root filesystem is unpacked from the benchmark image: {docker_reason}"
    return True, "LXC system container (systemd as init), reached from the peer namespace through a routed veth"


def _docker_status() -> tuple[bool, str]:
    from kitlib.measure.host.docker_engine import docker_client

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
