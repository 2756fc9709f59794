"""Which machine a record was measured on: a stable id and a short description, from provenance facts.

Records of different machines are never pooled, so each record carries the id of the host that ran
the system under test. The id is computed from the `host` dict that `provenance.collect_host` writes
(and that older `provenance.json` files already hold), so records and provenance always agree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def host_id(host: Mapping[str, Any]) -> str:
    """12 hex digits naming a machine: its /etc/machine-id where provenance recorded one, else a hash of
    CPU model, logical CPUs, memory, kernel and hostname (what stays the same across runs on one machine)."""
    os_facts = host.get("os") or {}
    machine_id = os_facts.get("machine_id")
    if machine_id:
        payload: Any = {"machine_id": machine_id}
    else:
        cpu, memory = host.get("cpu") or {}, host.get("memory") or {}
        payload = {
            "cpu": cpu.get("model"),
            "cpus": cpu.get("logical_cpus"),
            "memory": memory.get("MemTotal"),
            "kernel": os_facts.get("kernel"),
            "hostname": os_facts.get("hostname"),
        }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]


#: what `systemd-detect-virt` names a container (not a VM): the kit's host may run in one
CONTAINER_KINDS = {"openvz", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "podman", "rkt", "wsl", "proot", "pouch"}


def is_virtual_machine(host: Mapping[str, Any]) -> bool:
    """Whether the host is itself a VM guest (the CPU advertises a hypervisor, or provenance names a
    hypervisor): its `native` is then not bare metal. A container around the kit is not a VM."""
    virtualization = (host.get("virtualization") or "").strip()
    if virtualization and virtualization not in ("none", "unknown", "vm") and virtualization not in CONTAINER_KINDS:
        return True
    return "hypervisor" in ((host.get("cpu") or {}).get("virtualization_flags") or [])


def numa_nodes(host: Mapping[str, Any]) -> int:
    return int((host.get("numa") or {}).get("nodes") or 1)


def describe_host(host: Mapping[str, Any]) -> str:
    """One line a figure or table can carry: `vm: AMD EPYC, 2 CPUs, 24 GiB, a VM guest`."""
    cpu, memory, os_facts = host.get("cpu") or {}, host.get("memory") or {}, host.get("os") or {}
    parts = [str(cpu.get("model") or "unknown CPU"), f"{cpu.get('logical_cpus', '?')} CPUs"]
    total = str(memory.get("MemTotal", "")).split()
    if total and total[0].isdigit():
        parts.append(f"{int(total[0]) / 2**20:.0f} GiB")
    if is_virtual_machine(host):
        parts.append("a VM guest")
    return f"{os_facts.get('hostname') or host_id(host)}: " + ", ".join(parts)
