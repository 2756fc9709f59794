"""Which machine a record was measured on: a stable id and a short description, from provenance facts.

Records of different machines are never pooled, so each record carries the id of the host that ran
the system under test. The id is computed from the `host` dict that `provenance.collect_host` writes
(and that older `provenance.json` files already hold), so records and provenance always agree: records
written before the hardware was part of the id get theirs recomputed from provenance when loaded
(`kitlib.results.record_files`), never rewritten on disk.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

#: memory is compared in steps of this many MiB: the kernel's own reservations move MemTotal by a few
#: hundred KiB between kernels and boots of one machine, never by a memory module's worth
MEMORY_STEP_MIB = 128
#: the facts of a host's `instance` dict that are part of its identity (`kitlib.core.instance`)
INSTANCE_KEYS = ("instance_id", "product_uuid", "cloud_instance_id")
#: the host id of the IBM authors' published results once imported (`kit import felter2014`): their
#: machine is known only by what the report says of it
FELTER2014 = "felter2014"


def identity(host: Mapping[str, Any]) -> dict[str, Any]:
    """What tells one machine from another: its machine-id together with its hardware (CPU model,
    logical CPUs, caches, memory), so machines cloned from one image (one machine-id) stay apart.
    Without a machine-id the hostname stands in for it. A fact provenance did not record is None.

    Where the host's facts hold an instance identity (`kitlib.core.instance`: the kit's random id of
    the machine, its DMI product UUID, its cloud instance id), it is part of the identity too and
    memory is counted in whole GiB (`memory_gib`); facts recorded before the instance identity
    existed give the id they always gave."""
    cpu, memory, os_facts = host.get("cpu") or {}, host.get("memory") or {}, host.get("os") or {}
    facts: dict[str, Any] = {
        "machine_id": os_facts.get("machine_id") or None,
        "cpu_model": cpu.get("model") or None,
        "logical_cpus": cpu.get("logical_cpus"),
        "caches": dict(cpu["caches"]) if cpu.get("caches") else None,
    }
    instance = instance_facts(host)
    if instance:
        facts["memory_gib"] = memory_gib(memory.get("MemTotal"))
        facts.update(instance)
    else:
        facts["memory_mib"] = memory_mib(memory.get("MemTotal"))
    if not facts["machine_id"]:
        facts["hostname"] = os_facts.get("hostname") or None
    return facts


def instance_facts(host: Mapping[str, Any]) -> dict[str, Any]:
    """The instance identity's facts the host's `instance` dict holds ({} when it holds no id)."""
    recorded = host.get("instance") or {}
    facts = {key: recorded.get(key) or None for key in INSTANCE_KEYS}
    return facts if any(facts.values()) else {}


def memory_gib(mem_total: Any) -> int | None:
    """`MemTotal` (`24684084 kB`) as the whole GiB of memory it falls short of (24): the kernel's
    reservations keep MemTotal below the memory installed, so rounding up finds the installed size and
    moves only when that does, where a 128 MiB step moved with 60 MB of reservations near its edge."""
    words = str(mem_total or "").split()
    if not words or not words[0].isdigit():
        return None
    return -(-int(words[0]) // 2**20)


def memory_mib(mem_total: Any) -> int | None:
    """`MemTotal` as /proc/meminfo gives it (`24684084 kB`) in MiB, rounded to MEMORY_STEP_MIB: the
    measure of memory in the ids of hosts recorded without an instance identity."""
    words = str(mem_total or "").split()
    if not words or not words[0].isdigit():
        return None
    return round(int(words[0]) / 1024 / MEMORY_STEP_MIB) * MEMORY_STEP_MIB


def host_id(host: Mapping[str, Any]) -> str:
    """12 hex digits naming a machine: a hash of its `identity`; a reference host (records imported from a
    published data set, `reference` set in its facts) keeps the name its importer gave it."""
    if host.get("reference") and host.get("host_id"):
        return str(host["host_id"])
    return hashlib.sha256(json.dumps(identity(host), sort_keys=True).encode()).hexdigest()[:12]


def legacy_host_id(host: Mapping[str, Any]) -> str:
    """The id records carried before the hardware was part of it (the machine-id alone where one was
    recorded): `recorded_ids` maps such records to the id their provenance gives now."""
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


def recorded_ids(host: Mapping[str, Any]) -> set[str]:
    """Every id records made on this host may carry: the one its provenance recorded, the legacy one."""
    return {str(i) for i in (host.get("host_id"), legacy_host_id(host)) if i}


def differences(there: Mapping[str, Any], here: Mapping[str, Any]) -> list[str]:
    """How two hosts' identities differ (`cpu_model: 'AMD EPYC' there, 'Intel Xeon' here`), on the facts
    both recorded: a fact one side lacks is unknown, not a difference."""
    a, b = identity(there), identity(here)
    found = []
    for name in sorted(set(a) & set(b)):
        if a[name] is None or b[name] is None or a[name] == b[name]:
            continue
        if isinstance(a[name], dict) and isinstance(b[name], dict):  # caches: the levels that differ
            found += [
                f"{name} {level}: {a[name].get(level)!r} there, {b[name].get(level)!r} here"
                for level in sorted(set(a[name]) | set(b[name]))
                if a[name].get(level) != b[name].get(level)
            ]
        else:
            found.append(f"{name}: {a[name]!r} there, {b[name]!r} here")
    return found


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
