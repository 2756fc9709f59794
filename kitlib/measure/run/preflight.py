"""`kit check`: is this host quiet and steady enough to measure on (compare pyperf's `system show`)?

One line per item, each with its state and, where it is not as a benchmark wants it, what to change:
the CPU governor and boost, SMT siblings of the CPUs the kit pins the system under test to, steal
time and the load of other processes over a short sample, free memory, and whether this host is a
VM guest or itself a container, and what its host id is made of. Everything is read from /proc and
/sys (under `root`, so a test can point it at captured files); nothing is changed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from kitlib.core import hostid, instance, interference
from kitlib.core.errors import ParseError
from kitlib.measure import cpus, provenance

OK, WARN, INFO = "ok", "warn", "info"
#: below this much available memory a VM guest or a STREAM array may push the host into swapping
MIN_AVAILABLE_GIB = 2.0


@dataclass(frozen=True)
class Item:
    name: str
    status: str  # ok | warn | info
    state: str
    change: str = ""


def _text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def governor(root: Path, cpu_ids: list[int]) -> Item:
    base = root / "sys/devices/system/cpu"
    found = {c: _text(base / f"cpu{c}/cpufreq/scaling_governor") for c in cpu_ids}
    known = {c: g for c, g in found.items() if g}
    if not known:
        return Item(
            "CPU governor",
            INFO,
            "not reported: this kernel exposes no cpufreq (usual in a VM guest)",
            "nothing to set here; the clock is the hypervisor's (ask its owner for a fixed one)",
        )
    others = sorted({g for g in known.values() if g != "performance"})
    state = ", ".join(f"cpu{c} {g}" for c, g in sorted(known.items()))
    if not others:
        return Item("CPU governor", OK, state)
    return Item(
        "CPU governor",
        WARN,
        state,
        "use the performance governor: `cpupower frequency-set -g performance` "
        "(or write `performance` to /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)",
    )


def boost(root: Path) -> Item:
    base = root / "sys/devices/system/cpu"
    no_turbo, generic = _text(base / "intel_pstate/no_turbo"), _text(base / "cpufreq/boost")
    if no_turbo is not None:
        on, where, off = (
            no_turbo == "0",
            "intel_pstate/no_turbo",
            "`echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo`",
        )
    elif generic is not None:
        on, where, off = generic == "1", "cpufreq/boost", "`echo 0 > /sys/devices/system/cpu/cpufreq/boost`"
    else:
        return Item("CPU boost", INFO, "not reported by this kernel", "nothing to set here")
    if not on:
        return Item("CPU boost", OK, f"off ({where})")
    return Item("CPU boost", WARN, f"on ({where}): the clock follows temperature and load", f"turn it off: {off}")


def smt_siblings(root: Path, sut_cpus: list[int]) -> Item:
    base = root / "sys/devices/system/cpu"
    control = _text(base / "smt/control") or "not reported"
    shared = {}
    for cpu in sut_cpus:
        text = _text(base / f"cpu{cpu}/topology/thread_siblings_list")
        if text:
            siblings = _cpu_list(text) - {cpu}
            if siblings:
                shared[cpu] = sorted(siblings)
    pinned = ",".join(map(str, sut_cpus))
    if not shared:
        return Item("SMT siblings", OK, f"no sibling shares a core with the pinned CPU(s) {pinned} (SMT {control})")
    state = "; ".join(f"cpu{c} shares its core with cpu{','.join(map(str, s))}" for c, s in shared.items())
    return Item(
        "SMT siblings",
        WARN,
        state,
        "whatever runs on a sibling slows the system under test: turn SMT off "
        "(`echo off > /sys/devices/system/cpu/smt/control`, or boot with `nosmt`)",
    )


def _cpu_list(text: str) -> set[int]:
    found: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        if low.strip().isdigit():
            found.update(range(int(low), int(high or low) + 1))
    return found


def memory(root: Path) -> Item:
    text = _text(root / "proc/meminfo") or ""
    values = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[name] = int(parts[0])  # kB
    if "MemTotal" not in values or "MemAvailable" not in values:
        raise ParseError("/proc/meminfo", root / "proc/meminfo", "no MemTotal or MemAvailable line")
    available, total = values["MemAvailable"] / 2**20, values["MemTotal"] / 2**20
    state = f"{available:.1f} GiB available of {total:.1f} GiB"
    if available >= MIN_AVAILABLE_GIB:
        return Item("free memory", OK, state)
    return Item(
        "free memory",
        WARN,
        state,
        f"free at least {MIN_AVAILABLE_GIB:g} GiB: VM guests and STREAM's arrays need it, "
        "and swapping distorts every figure",
    )


def vm_guest(root: Path) -> Item:
    cpuinfo = _text(root / "proc/cpuinfo") or ""
    flagged = any(line.startswith("flags") and " hypervisor" in line for line in cpuinfo.splitlines())
    vendor = _text(root / "sys/class/dmi/id/sys_vendor") or _text(root / "sys/hypervisor/type")
    if not flagged and not vendor:
        return Item("VM guest", OK, "no: bare metal (no hypervisor flag)")
    if not flagged:
        return Item("VM guest", OK, f"no hypervisor flag (vendor {vendor})")
    return Item(
        "VM guest",
        INFO,
        f"yes (hypervisor CPU flag{', ' + vendor if vendor else ''}): other guests can take its CPU (steal)",
        "for final numbers use a dedicated host or pinned, dedicated vCPUs; `kvm` needs nested virtualization here",
    )


def container(root: Path) -> Item:
    marks = [name for name in (".dockerenv", "run/.containerenv") if (root / name).exists()]
    cgroup = _text(root / "proc/1/cgroup") or ""
    marks += [word for word in ("docker", "kubepods", "lxc", "libpod") if f"/{word}" in cgroup]
    if not marks:
        return Item("container", OK, "no: this host is not itself a container")
    return Item(
        "container",
        INFO,
        f"yes ({', '.join(dict.fromkeys(marks))}): `native` here is this container, not the bare host",
        "its CPU and memory limits bound every environment; run on the bare host for the paper's comparison",
    )


def host_identity(host: dict) -> Item:
    """What this host's id is made of: a new machine must not take the id of another's records."""
    facts = hostid.identity(host)
    caches = " ".join(f"{level} {size}" for level, size in (facts.get("caches") or {}).items()) or "none recorded"
    base = [
        f"machine-id {str(facts['machine_id'])[:8]}…"
        if facts.get("machine_id")
        else f"hostname {facts.get('hostname')}",
        f"CPU {facts.get('cpu_model')}",
        f"{facts.get('logical_cpus')} CPUs",
        f"caches {caches}",
        f"{facts['memory_gib']} GiB" if "memory_gib" in facts else f"{facts.get('memory_mib')} MiB",
    ]
    state = f"{hostid.host_id(host)} from " + ", ".join(base) + "; " + instance.describe(host.get("instance"))
    recorded = host.get("instance") or {}
    if not hostid.instance_facts(host):
        return Item(
            "host id",
            WARN,
            state,
            "machines cloned from this image get this id too: let the kit write its instance id "
            f"({instance.SYSTEM_FILE} as root, or under $XDG_STATE_HOME/kitlib)",
        )
    if recorded.get("product_uuid") or recorded.get("cloud_instance_id"):
        return Item("host id", OK, state)
    return Item(
        "host id",
        INFO,
        state,
        f"no DMI or cloud id here: an image cloned from this machine carries {recorded.get('file')}; "
        "remove that file in the clone before its first run",
    )


def load(seconds: float = 1.0) -> list[Item]:
    """Steal and other processes' CPU over `seconds` of this host (the check's own process excluded),
    judged by the default interference rule, with the busiest of them named."""
    rule = interference.DEFAULT_RULE
    with interference.PointSampler(None, interference.Ownership()) as sampler:
        time.sleep(seconds)
    fig = sampler.figures
    if fig is None:
        return [Item("steal / load", INFO, f"not sampled: {sampler.error}")]
    items = []
    steal_limit = rule.max_steal_pct
    steal = fig.steal_pct
    if steal is None:
        items.append(Item("steal", INFO, "not reported"))
    elif steal_limit is not None and steal > steal_limit:
        items.append(
            Item(
                "steal",
                WARN,
                f"{steal:.1f}% of CPU time over {seconds:g} s",
                "the hypervisor runs other guests on this one's CPUs: use dedicated vCPUs or a quieter host",
            )
        )
    else:
        items.append(Item("steal", OK, f"{steal:.1f}% of CPU time over {seconds:g} s"))
    shares = [(o, 100 * o["cpu_s"] / fig.wall_s) for o in fig.busiest_others]
    named = ", ".join(f"{o['command']} (pid {o['pid']}) {pct:.0f}% of a CPU" for o, pct in shares if pct >= 1)
    loadavg = interference.parse_loadavg((interference.PROC / "loadavg").read_text())
    state = (
        f"{fig.foreign_cpu_pct:.1f}% of the host's CPU capacity over {fig.wall_s:g} s, "
        f"load average {loadavg.load1:g} on {len(os.sched_getaffinity(0))} CPU(s)"
        + (f"; busiest: {named}" if named else "")
    )
    limit = rule.max_foreign_cpu_pct
    if fig.foreign_cpu_pct is not None and limit is not None and fig.foreign_cpu_pct > limit:
        items.append(
            Item(
                "background load",
                WARN,
                state,
                f"stop them or wait for a quiet host: above {limit:g}% a point counts as disturbed and is measured "
                f"again (at most {rule.max_attempts} times)",
            )
        )
    else:
        items.append(Item("background load", OK, state))
    return items


def check(root: Path = Path("/"), seconds: float = 1.0) -> list[Item]:
    """Every item of `kit check` for this host."""
    layout = cpus.split(1)
    online = cpus.available_cpus()
    return [
        governor(root, online),
        boost(root),
        smt_siblings(root, layout.sut_cpus),
        *load(seconds),
        memory(root),
        vm_guest(root),
        container(root),
        host_identity(provenance.collect_identity()),
    ]


def render(items: list[Item]) -> str:
    """pyperf's `system show` habit: one line per item, what to change under it."""
    width = max(len(item.name) for item in items)
    lines = []
    for item in items:
        lines.append(f"{item.name:<{width}}  {item.status:<4}  {item.state}")
        if item.change:
            lines.append(f"{'':<{width}}        -> {item.change}")
    warned = sum(item.status == WARN for item in items)
    lines.append(f"{warned} item(s) to change" if warned else "nothing to change")
    return "\n".join(lines)
