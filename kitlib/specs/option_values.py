"""The values a label's options may take: one spelling each, Docker's and the kernel's limits, and
what this host has.

A label is the environment's name in records, figures and the run's digest, so one environment has
one spelling: a value that is not written canonically is refused with the canonical form (never
rewritten behind the user's back, so the label in the records is the one typed). Docker takes 0 as
"not set" (`--cpu-quota 0` runs unthrottled, `--memory 0` unlimited) and the kernel clamps shares
and periods out of its range, so such values would measure the opposite of what the label says:
they are refused with what is allowed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kitlib.core import numa

#: the kernel's CFS bandwidth limits, as Docker enforces them (`--cpu-period`, `--cpu-quota`)
MIN_QUOTA_US = 1000
PERIOD_RANGE_US = (1000, 1_000_000)
#: Docker's period when a label gives a quota only
DEFAULT_PERIOD_US = 100_000
#: cpu.shares outside [2, 262144] is clamped by the kernel (MIN_SHARES, MAX_SHARES); 0 is Docker's default
SHARES_RANGE = (2, 262_144)
#: Docker refuses a smaller limit ("Minimum memory limit allowed is 6MB"); 0 means no limit
MIN_MEMORY_BYTES = 6 * 2**20
_UNITS = {"k": 2**10, "m": 2**20, "g": 2**30}
#: Linux numbers CPUs below its NR_CPUS, at most 8192 on any architecture it builds for
MAX_CPUS = 8192
#: and NUMA nodes below MAX_NUMNODES, at most 1024 (NODES_SHIFT 10)
MAX_NODES = 1024
ONLINE_CPUS = Path("/sys/devices/system/cpu/online")


def cpu_set(text: str) -> list[int]:
    """The CPUs of a list like `0-3,8` (sorted, once each); a range that runs backwards is refused."""
    found: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if last < first:
            raise ValueError(f"the range {part} runs backwards")
        if last >= MAX_CPUS:
            raise ValueError(f"CPU {last} is beyond any Linux host's CPUs (numbered below {MAX_CPUS})")
        found.update(range(first, last + 1))
    return sorted(found)


def cpu_list(cpus: list[int]) -> str:
    """CPUs written as the kernel lists them (`0-3,8`): runs of consecutive CPUs as ranges."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def memory_bytes(text: str) -> int:
    return int(text[:-1]) * _UNITS[text[-1]]


def memory_text(nbytes: int) -> str:
    """A size in the largest unit it is a whole number of (`1g`, not `1024m`)."""
    for unit in ("g", "m", "k"):
        if nbytes % _UNITS[unit] == 0:
            return f"{nbytes // _UNITS[unit]}{unit}"
    raise ValueError(f"{nbytes} bytes is not a whole number of KiB")


def canonical(name: str, text: str) -> str:
    """The one spelling of an option's value: numbers without leading zeros, memory in its largest
    whole unit, CPU sets as the kernel lists them; options without a value are left as they are."""
    if name in ("shares", "quota", "period", "numa"):
        return str(int(text))
    if name == "mem":
        return memory_text(memory_bytes(text))
    if name == "cpus":
        return cpu_list(cpu_set(text))
    return text


def out_of_range(name: str, text: str) -> str | None:
    """What is allowed for the option, when its value is outside Docker's or the kernel's limits
    (host-independent; see `beyond_host` for this host's); None when the value is within them."""
    if name == "quota" and int(text) < MIN_QUOTA_US:
        return (
            f"a CPU quota is at least {MIN_QUOTA_US} µs per period (the kernel's minimum; "
            "Docker takes 0 as no quota, which would run unthrottled)"
        )
    low, high = PERIOD_RANGE_US
    if name == "period" and not low <= int(text) <= high:
        return f"a CPU period is {low} to {high} µs (Docker's and the kernel's range; 0 is Docker's default)"
    low, high = SHARES_RANGE
    if name == "shares" and not low <= int(text) <= high:
        return f"CPU shares are {low} to {high} (the kernel clamps other values; Docker takes 0 as its default 1024)"
    if name == "numa" and int(text) >= MAX_NODES:
        return f"Linux numbers NUMA nodes below {MAX_NODES}"
    if name == "cpus":
        try:
            cpu_set(text)
        except ValueError as exc:
            return f"a CPU set lists CPUs and ascending ranges ({exc})"
    if name == "mem" and memory_bytes(text) < MIN_MEMORY_BYTES:
        return "a memory limit is at least 6m (Docker's minimum; 0 means no limit)"
    return None


def online_cpus() -> list[int]:
    """This host's online CPUs (the kernel's list; the CPU count where /sys does not say)."""
    try:
        return cpu_set(ONLINE_CPUS.read_text().strip())
    except (OSError, ValueError):
        return list(range(os.cpu_count() or 1))


def host_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass(frozen=True)
class HostShape:
    """What options are held to: a host's online CPUs, its NUMA nodes with their CPUs, and its memory."""

    online: list[int]
    nodes: dict[int, list[int]]
    memory_bytes: int
    #: how the reasons name the host
    name: str = "this host"


def this_host() -> HostShape:
    nodes = {}
    for node in numa.nodes():
        try:
            nodes[node] = cpu_set(numa.cpulist(node))
        except (OSError, ValueError):
            nodes[node] = []
    return HostShape(online_cpus(), nodes, host_memory_bytes())


def shape_from(online: str, nodes: dict[int, str], meminfo: str, name: str) -> HostShape:
    """A remote host's shape from what its kernel prints (/sys/devices/system/cpu/online, each node's
    cpulist, /proc/meminfo's MemTotal in kB); text that does not read is an error, never a guess."""
    total = next((line.split() for line in meminfo.splitlines() if line.startswith("MemTotal:")), None)
    if total is None or len(total) < 2 or not total[1].isascii() or not total[1].isdigit():
        raise ValueError(f"{name}: no MemTotal line in its /proc/meminfo")
    return HostShape(
        cpu_set(online.strip()), {n: cpu_set(c.strip()) for n, c in nodes.items()}, int(total[1]) * 1024, name
    )


def beyond_host(options: dict[str, object], host: HostShape | None = None) -> list[str]:
    """Why options do not fit a host (this one unless given: CPUs that are not online, NUMA nodes it lacks,
    more memory or CPU time than it has: a limit that can never bind measures no limit); empty when they fit."""
    host = host or this_host()
    reasons = []
    online = host.online
    if "cpus" in options:
        missing = sorted(set(cpu_set(str(options["cpus"]))) - set(online))
        if missing:
            reasons.append(
                f"cpus{options['cpus']}: CPU(s) {cpu_list(missing)} are not online "
                f"{'here' if host.name == 'this host' else 'on ' + host.name} (online: {cpu_list(online)})"
            )
    if "numa" in options and options["numa"] not in (host.nodes or {0: online}):
        nodes = ", ".join(map(str, sorted(host.nodes or {0: online})))
        reasons.append(f"numa{options['numa']}: {host.name} has no NUMA node {options['numa']} (its nodes: {nodes})")
    if "mem" in options and memory_bytes(str(options["mem"])) > host.memory_bytes:
        total = host.memory_bytes
        reasons.append(
            f"mem{options['mem']}: more than {host.name}'s {total / 2**30:.1f} GiB of memory (a limit it never "
            f"reaches); at most {memory_text(total // 2**20 * 2**20)}"
        )
    if "quota" in options:
        reason = quota_never_throttles(options, online, host)
        if reason:
            reasons.append(reason)
    return reasons


def label_cpus(options: dict[str, object], online: list[int], host: HostShape | None = None) -> list[int]:
    """The CPUs a label's environment runs on: its NUMA node's (`numa`, which Docker's cpuset takes
    over `cpus`), else its own set (`cpus`), else every online CPU."""
    if "numa" in options:
        if host is not None:
            return host.nodes.get(int(options["numa"])) or online  # type: ignore[call-overload]
        try:
            return cpu_set(numa.cpulist(int(options["numa"])))  # type: ignore[call-overload]
        except (OSError, ValueError):
            return online  # no such node: refused on its own
    return cpu_set(str(options["cpus"])) if "cpus" in options else online


def quota_never_throttles(options: dict[str, object], online: list[int], host: HostShape | None = None) -> str | None:
    """Why a CPU quota never binds: at least a whole period on each CPU the label may run on (its own
    set, not the host's) is more CPU time than those CPUs have. None when it can throttle."""
    period = int(options.get("period", DEFAULT_PERIOD_US))  # type: ignore[call-overload]
    own = label_cpus(options, online, host)
    most = period * len(own)
    if int(options["quota"]) < most:  # type: ignore[call-overload]
        return None
    if "numa" in options:
        which = f"NUMA node {options['numa']}'s {cpu_list(own)}"
    elif "cpus" in options:
        which = f"the label's cpus{options['cpus']}"
    else:
        which = f"{host.name if host else 'this host'}'s online {cpu_list(own)}"
    return (
        f"quota{options['quota']}: at least all the CPU time {len(own)} CPU(s) ({which}) have in a {period} µs "
        f"period, so it never throttles; at most {most - 1}"
    )
