"""What else used the machine while a point ran, read from /proc and /sys (BenchExec's habit: the
CPU time of processes beside the wall time), each process counted as the run's own or someone else's.

Figures of one point (`Figures`), each over the interval the point's measurement ran:

- steal_pct: the steal column of /proc/stat's `cpu` line, in % of all CPU time of the interval (a
  hypervisor ran something else on this guest's virtual CPUs).
- foreign_cpu_pct: CPU time of the processes that are neither the run's own nor the kernel's own
  threads (kthreadd's children: writeback, the journal, ksoftirqd, mostly working for the point's own
  I/O; an fio random write read 8-11% of the machine in them), summed process by process from
  /proc/<pid>/stat, in % of the host's capacity over the interval (wall time × CPUs): a busy loop on
  one CPU of two is 50. Each process counts from its first reading in the point (0 if it started
  inside it) to its last; one that exited counts by its parent's cutime and cstime when a process
  still alive reaped it (pid 1 reaps the orphans). Why not the machine's busy time minus the run's
  own: /proc/stat samples CPU states at each clock tick and, on a tickless kernel, loses ticks
  wherever CPUs go idle and wake many thousand times a second; around a one-connection Redis point on
  a 2-core guest it counted 11% fewer ticks than wall time × CPUs and 2.3 s less busy time than the
  run's own processes used (other processes at -7%), while a process's own time is the scheduler's
  and exact. The subtraction then hid a disturbance of that size.
  The run's own (`Ownership`) are this process and its
  descendants (utime + stime of the live ones plus cutime + cstime, which hold their reaped
  children), processes marked as started by this run (KITLIB_OWNER, see kitlib.core.procs), the cgroups
  of the run's containers (Docker containers labelled with this process, LXC containers named after
  the run; a cgroup keeps counting processes that exited), and, while a point runs in a local
  Docker environment, the engine's daemons (dockerd, containerd, its shims, docker-proxy, runc):
  their work is the environment's cost. An LXC point's commands run through lxc-attach, whose children
  count in the container's cgroup and again, once reaped, in the kit's own cutime: its own CPU would
  read about twice the real, so an LXC point records no `own_cpu_s` (`LXC_OWN_UNKNOWN`); the others'
  share does not rest on it.
  Limits: a process of the run reaped by another process (pid 1 reaping a daemon of the run) counts
  as foreign for its time after its last sample (at most OWN_EVERY × SAMPLE_S), a process that
  starts and exits between two samples while its parent exits too is missed, and one first seen
  already exited (a zombie: its cgroup then reads as the root one, so a container's command could not
  be told from another's) counts as nobody's. Interrupts: on a kernel
  without IRQ time accounting (`irq_time_in_processes`) the interrupts and softirqs served while a
  process ran are in its time, so the run's own network softirq served while another process ran
  counts as that process's.
- runqueue_mean: /proc/stat's procs_running (runnable threads on the whole host, the sampler's own
  read among them), mean of samples taken every SAMPLE_S by a background thread.
- cpu_mhz: mean of /sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq over the system under
  test's CPUs and the samples; missing where the kernel reports no clock (most VM guests), never 0.

A `Rule` with recorded thresholds says whether a point was disturbed; the runner measures a
disturbed point again, at most `Rule.max_attempts` times.
"""

from __future__ import annotations

import functools
import gzip
import math
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kitlib.core import naming
from kitlib.core.errors import ParseError

PROC = Path("/proc")
SYS_CPU = Path("/sys/devices/system/cpu")
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: seconds between samples of the run queue and the clock; the run's processes are scanned every OWN_EVERY samples
SAMPLE_S = 0.25
OWN_EVERY = 2
#: the container engine's processes (comm, at most 15 characters): the run's own while it runs in Docker
ENGINE_COMMS = ("dockerd", "containerd", "containerd-shim", "docker-proxy", "runc")
_CONTAINER_ID = re.compile(r"(?:^|[/-])([0-9a-f]{64})(?:\.scope)?$")
TOOL = "/proc"
#: why an LXC point records none of the run's own CPU time (missing, never a wrong number)
LXC_OWN_UNKNOWN = (
    "an LXC point's commands run through lxc-attach: the container's cgroup counts them, and the kit's own "
    "process counts them again once lxc-attach reaps them, so the run's own CPU cannot be told apart"
)
#: the kernel's thread creator: its children (kworkers, jbd2, ksoftirqd, kswapd) are the kernel's own threads
KTHREADD = 2
#: the record columns of a point's figures (beside attempt, discarded_attempts and disturbed)
COLUMNS = ("steal_pct", "foreign_cpu_pct", "runqueue_mean", "cpu_mhz", "capacity_pct")
#: the words of the reason a point gets when the capacity probes found the machine slowed
SLOWED = "of its usual capacity"
#: the words of the reason a point gets when both probes found the machine well above its usual figure
CHANGED = "of the run's usual figure (the machine changed under the run)"


# -- parsing (pure functions over the files' text) ----------------------------------------------
@dataclass(frozen=True)
class CpuTimes:
    """One `cpu` line of /proc/stat, in clock ticks."""

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def total(self) -> int:
        return self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal


@dataclass(frozen=True)
class ProcStat:
    cpu: CpuTimes
    per_cpu: dict[int, CpuTimes]
    procs_running: int


def parse_proc_stat(text: str, source: str = "/proc/stat") -> ProcStat:
    """The aggregate and per-CPU times and procs_running; a file missing either is cut off."""
    cpu, per_cpu, running = None, {}, None
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu"):
            values = rest.split()
            if len(values) < 8 or not all(v.isdigit() for v in values[:8]):
                raise ParseError(TOOL, source, f"`{name}` line has fewer than 8 counters: {line!r}")
            times = CpuTimes(*(int(v) for v in values[:8]))
            if name == "cpu":
                cpu = times
            elif name[3:].isdigit():
                per_cpu[int(name[3:])] = times
        elif name == "procs_running" and rest.strip().isdigit():
            running = int(rest)
    if cpu is None or running is None:
        raise ParseError(TOOL, source, "no `cpu` line" if cpu is None else "no procs_running line")
    return ProcStat(cpu, per_cpu, running)


@dataclass(frozen=True)
class LoadAvg:
    load1: float
    load5: float
    load15: float
    runnable: int
    threads: int


def parse_loadavg(text: str, source: str = "/proc/loadavg") -> LoadAvg:
    parts = text.split()
    try:
        runnable, threads = parts[3].split("/")
        return LoadAvg(float(parts[0]), float(parts[1]), float(parts[2]), int(runnable), int(threads))
    except (IndexError, ValueError):
        raise ParseError(TOOL, source, f"not `load1 load5 load15 runnable/threads pid`: {text.strip()!r}") from None


@dataclass(frozen=True)
class PidStat:
    """The fields of /proc/<pid>/stat the accounting needs; times in clock ticks."""

    pid: int
    comm: str
    state: str
    ppid: int
    utime: int
    stime: int
    cutime: int
    cstime: int
    starttime: int

    @property
    def ticks(self) -> int:
        """This process's CPU time and that of the children it reaped."""
        return self.utime + self.stime + self.cutime + self.cstime


def parse_pid_stat(text: str, source: str = "/proc/<pid>/stat") -> PidStat:
    """comm may hold spaces and parentheses: it runs from the first `(` to the last `)`."""
    open_at, close_at = text.find("("), text.rfind(")")
    fields = text[close_at + 2 :].split() if close_at > open_at >= 0 else []
    if len(fields) < 20:
        raise ParseError(TOOL, source, f"fewer than 22 fields: {text.strip()[:120]!r}")
    try:
        numbers = [int(v) for v in fields[1:20]]
        pid = int(text[:open_at])
    except ValueError:
        raise ParseError(TOOL, source, f"a non-numeric field: {text.strip()[:120]!r}") from None
    # fields after comm, 0-based: state, ppid(1), …, utime(11), stime(12), cutime(13), cstime(14), …, starttime(19)
    return PidStat(
        pid=pid,
        comm=text[open_at + 1 : close_at],
        state=fields[0],
        ppid=numbers[0],
        utime=numbers[10],
        stime=numbers[11],
        cutime=numbers[12],
        cstime=numbers[13],
        starttime=numbers[18],
    )


def parse_pid_cgroup(text: str) -> dict[str, str]:
    """controller -> path of /proc/<pid>/cgroup; the unified (v2) hierarchy's path is under ``""``."""
    found = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                found[controller] = parts[2]
    return found


def parse_cpuacct_usage(text: str, source: str = "cpuacct.usage") -> float:
    """Seconds from a cgroup v1 cpuacct.usage (nanoseconds)."""
    if not text.strip().isdigit():
        raise ParseError(TOOL, source, f"not a count of nanoseconds: {text.strip()[:60]!r}")
    return int(text) / 1e9


def parse_cpu_stat(text: str, source: str = "cpu.stat") -> float:
    """Seconds from a cgroup v2 cpu.stat's usage_usec."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == "usage_usec" and value.strip().isdigit():
            return int(value) / 1e6
    raise ParseError(TOOL, source, "no usage_usec line")


def parse_khz(text: str, source: str = "scaling_cur_freq") -> float:
    """MHz from a cpufreq file (kHz)."""
    if not text.strip().isdigit():
        raise ParseError(TOOL, source, f"not a frequency in kHz: {text.strip()[:60]!r}")
    return int(text) / 1000.0


# -- reading the live system ------------------------------------------------------------------
def read_proc_stat(proc: Path = PROC) -> ProcStat:
    return parse_proc_stat((proc / "stat").read_text(), str(proc / "stat"))


def cpu_mhz(cpus: Iterable[int], sys_cpu: Path = SYS_CPU) -> float | None:
    """Mean current clock of the given CPUs, None where none reports one."""
    values = []
    for cpu in cpus:
        path = sys_cpu / f"cpu{cpu}" / "cpufreq" / "scaling_cur_freq"
        try:
            values.append(parse_khz(path.read_text(), str(path)))
        except (OSError, ParseError):
            continue
    return sum(values) / len(values) if values else None


def cgroup_seconds(path: str, root: Path = CGROUP_ROOT) -> float | None:
    """CPU seconds of a cgroup (its path as /proc/<pid>/cgroup names it), v2 first, then v1 cpuacct."""
    rel = path.lstrip("/")
    candidates = [
        (root / rel / "cpu.stat", parse_cpu_stat),
        (root / "unified" / rel / "cpu.stat", parse_cpu_stat),
        (root / "cpuacct" / rel / "cpuacct.usage", parse_cpuacct_usage),
        (root / "cpu,cpuacct" / rel / "cpuacct.usage", parse_cpuacct_usage),
    ]
    for file, parse in candidates:
        try:
            return parse(file.read_text(), str(file))
        except (OSError, ParseError):
            continue
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):  # exited meanwhile, or not ours to read
        return None


# -- whose CPU time is it -----------------------------------------------------------------------
@dataclass
class Ownership:
    """Which processes and cgroups are the run's own (see the module docstring), and their CPU time."""

    root_pid: int = field(default_factory=os.getpid)
    #: count the container engine's daemons as the run's own (the point runs in a local container)
    engine: bool = False
    #: container id -> whether it is the run's (asked once per container; None: no container is)
    is_own_container: Callable[[str], bool] | None = None
    proc: Path = PROC
    cgroup_root: Path = CGROUP_ROOT
    _classes: dict[tuple[int, int], str | None] = field(default_factory=dict, repr=False)
    _containers: dict[str, bool] = field(default_factory=dict, repr=False)
    #: (pid, starttime) -> CPU ticks of the kernel's own threads at the last scan (kthreadd's children)
    kernel: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    #: (pid, starttime) -> (ppid, ticks) at the last scan of every process but the kernel's threads
    everyone: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict, repr=False)
    #: which of them are other processes': neither the run's own nor in one of the run's cgroups
    others: set[tuple[int, int]] = field(default_factory=set, repr=False)
    #: (pid, starttime) -> command name of every other process any scan found
    names: dict[tuple[int, int], str] = field(default_factory=dict, repr=False)

    def scan(self) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[str, float]]:
        """((pid, starttime) -> (ppid, ticks) of the run's own processes, cgroup path -> seconds of its cgroups)."""
        stats: dict[int, PidStat] = {}
        for entry in self.proc.iterdir():
            if entry.name.isdigit():
                text = _read(entry / "stat")
                if text is not None:
                    try:
                        stats[int(entry.name)] = parse_pid_stat(text, str(entry / "stat"))
                    except ParseError:
                        continue
        tree = self._tree(stats)
        own: dict[tuple[int, int], tuple[int, int]] = {}
        groups: dict[str, float] = {}
        self.kernel, self.everyone, self.others = {}, {}, set()
        for pid, st in stats.items():
            key = (pid, st.starttime)
            if KTHREADD in (pid, st.ppid):
                self.kernel[key] = st.utime + st.stime
                continue
            self.everyone[key] = (st.ppid, st.ticks)
            if st.state == "Z" and pid not in tree and key not in self._classes:
                # exited before a scan saw it alive: its cgroup now reads as the root one, so whose it was
                # cannot be told (a container's command run by `docker exec`); in the ledger all the same, so
                # that its reaper's cutime does not take its time for the reaper's
                continue
            kind = "tree" if pid in tree else self._classify(key, st)
            if kind is None:
                self.others.add(key)
                self.names[key] = st.comm
            if kind in ("tree", "marked"):
                own[key] = (st.ppid, st.ticks)
            elif kind == "engine":
                # its own time only: the children a containerd-shim reaps are the containers' processes,
                # already counted by their cgroups
                own[key] = (st.ppid, st.utime + st.stime)
            elif kind is not None and kind.startswith("cgroup:"):
                path = kind[len("cgroup:") :]
                if path not in groups:
                    seconds = cgroup_seconds(path, self.cgroup_root)
                    if seconds is not None:
                        groups[path] = seconds
        return own, groups

    def _tree(self, stats: dict[int, PidStat]) -> set[int]:
        children: dict[int, list[int]] = {}
        for pid, st in stats.items():
            children.setdefault(st.ppid, []).append(pid)
        found, todo = set(), [self.root_pid]
        while todo:
            pid = todo.pop()
            if pid not in found:
                found.add(pid)
                todo.extend(children.get(pid, ()))
        return found

    def _classify(self, key: tuple[int, int], st: PidStat) -> str | None:
        if key not in self._classes:
            self._classes[key] = self._kind(key[0], st)
        return self._classes[key]

    def _kind(self, pid: int, st: PidStat) -> str | None:
        """A process inside one of the run's cgroups is counted by that cgroup alone (a process started
        there by the kit also carries its mark: counted twice, the run's own CPU would exceed the host's)."""
        group = self._own_cgroup(pid)
        if group is not None:
            return group
        environ = _read_bytes(self.proc / str(pid) / "environ")
        if environ and f"KITLIB_OWNER={self.root_pid}".encode() in environ.split(b"\0"):
            return "marked"
        if self.engine and any(st.comm.startswith(c) for c in ENGINE_COMMS):
            return "engine"
        return None

    def _own_cgroup(self, pid: int) -> str | None:
        text = _read(self.proc / str(pid) / "cgroup")
        if not text:
            return None
        groups = parse_pid_cgroup(text)
        path = groups.get("cpuacct") or groups.get("")
        if not path or path == "/":
            return None
        if any(naming.owner_pid(part) == self.root_pid for part in re.split(r"[/.]", path)):
            return f"cgroup:{path}"  # a system container named after the run (LXC)
        match = _CONTAINER_ID.search(path)
        if match and self.is_own_container is not None:
            cid = match.group(1)
            if cid not in self._containers:
                try:
                    self._containers[cid] = bool(self.is_own_container(cid))
                except Exception:  # noqa: BLE001 - an engine that cannot say: not counted as ours
                    self._containers[cid] = False
            if self._containers[cid]:
                return f"cgroup:{path}"
        return None


def kernel_seconds(first: dict[tuple[int, int], int], last: dict[tuple[int, int], int], clk_tck: int) -> float:
    """CPU time of the kernel's threads between two scans (a thread started in between counts from 0)."""
    return sum(ticks - first.get(key, 0) for key, ticks in last.items()) / clk_tck


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


@functools.lru_cache(maxsize=4)
def docker_container_check(root_pid: int | None = None) -> Callable[[str], bool] | None:
    """A check `container id -> started by this run` against the local engine (its labels), or None
    when no engine answers. Its own client, as it is asked from the sampler's thread."""
    try:
        import docker

        client = docker.from_env(timeout=10)
    except Exception:  # noqa: BLE001 - no engine: no container is the run's
        return None
    owner = str(root_pid or os.getpid())

    def check(container_id: str) -> bool:
        labels = client.api.inspect_container(container_id).get("Config", {}).get("Labels") or {}
        return labels.get(naming.LABEL_PID) == owner

    return check


@dataclass
class CpuLedger:
    """The CPU time of a set of processes (and cgroups) over a point, from scans: each process's first and
    last reading, so a process that exits is counted by its parent's cutime when a process of the set
    still alive reaped it, else by its last reading. A point's sampler keeps one of the run's own and one
    of every process, from which the others' share is told (`others_ticks`)."""

    first: dict[tuple[int, int], int] = field(default_factory=dict)
    last: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    groups_first: dict[str, float] = field(default_factory=dict)
    groups_last: dict[str, float] = field(default_factory=dict)
    _started: bool = False

    def add(self, own: dict[tuple[int, int], tuple[int, int]], groups: dict[str, float]) -> None:
        for key, (ppid, ticks) in own.items():
            self.first.setdefault(key, ticks if not self._started else 0)
            self.last[key] = (ppid, ticks)
        for path, seconds in groups.items():
            self.groups_first.setdefault(path, seconds if not self._started else 0.0)
            self.groups_last[path] = seconds
        self._started = True

    def seconds(self, final: dict[tuple[int, int], tuple[int, int]], clk_tck: int) -> float:
        """CPU seconds between the first scan and `final` (the last scan, already added)."""
        cgroups = sum(self.groups_last[p] - self.groups_first[p] for p in self.groups_last)
        return self.process_seconds(final, clk_tck) + cgroups

    def process_seconds(self, final: dict[tuple[int, int], tuple[int, int]], clk_tck: int) -> float:
        """The processes' part of `seconds`, the cgroups left out."""
        ticks = 0
        for _, value, start, reaper in self._ends(final):
            # alive at the end, or its time after the last reading is lost; else reaped by a process of the
            # set, or by one that a process of the set reaped in turn: its whole time is in that one's cutime
            ticks += value - start if reaper is None else -start
        return ticks / clk_tck

    def others_ticks(
        self, final: dict[tuple[int, int], tuple[int, int]], others: set[tuple[int, int]]
    ) -> dict[tuple[int, int], int]:
        """Each other process's ticks over the point, from a ledger of every process. A process that
        exited counts where its time went: in the cutime of the live process that reaped it. So another
        process reaped by another counts in its reaper's entry (the children it reaped with it); the run's
        own (or its container's) reaped by another (pid 1, once its parent exited) is taken out of its
        reaper by its last reading, leaving the reaper only what it ran after that; another process
        reaped by the run counts by its last reading."""
        alive = {key[0]: key for key in final}
        found: dict[tuple[int, int], int] = {}
        for key, value, start, reaper in self._ends(final):
            by = alive[reaper] if reaper is not None else None
            if by in others:
                # all its time is in the reaper's: its time before the point, or as the run's, leaves it
                found[by] = found.get(by, 0) - (start if key in others else value)
            elif key in others:
                found[key] = found.get(key, 0) + value - start
        return found

    def _ends(
        self, final: dict[tuple[int, int], tuple[int, int]]
    ) -> Iterator[tuple[tuple[int, int], int, int, int | None]]:
        """Each process of the ledger: its last reading, its first, and the pid of the live process whose
        cutime holds its time (None: alive at the end, or no live process reaped it)."""
        alive = {pid for pid, _ in final}
        parents = {pid: ppid for (pid, _), (ppid, _) in self.last.items()}
        for key, (ppid, value) in self.last.items():
            yield key, value, self.first[key], None if key in final else _reaper(ppid, alive, parents)


def _reaper(ppid: int, alive: Collection[int], parents: dict[int, int]) -> int | None:
    """The live process a vanished process's time reached: its parent if alive, or the one its parent,
    vanished too, was itself reaped into (the chain `bash -c 'time xz …'` under the kit); None if lost."""
    seen: set[int] = set()
    while ppid not in alive:
        if ppid in seen or ppid not in parents:
            return None
        seen.add(ppid)
        ppid = parents[ppid]
    return ppid


# -- the figures of one point ------------------------------------------------------------------
@dataclass(frozen=True)
class Figures:
    wall_s: float
    steal_pct: float | None
    foreign_cpu_pct: float | None
    own_cpu_s: float | None
    runqueue_mean: float | None
    runqueue_samples: int
    cpu_mhz: float | None
    #: the kernel charged interrupts to the processes they interrupted (see `irq_time_in_processes`)
    irq_in_processes: bool = False
    #: the machine's capacity probed around the point, in % of the run's usual (`kitlib.measure.capacity`)
    capacity_pct: float | None = None
    #: how widely the run's probes of that kind spread, in % of the usual figure (`capacity.spread_pct`)
    capacity_spread_pct: float | None = None
    #: CPU time of the kernel's own threads over the point: neither the run's nor another process's
    kernel_cpu_s: float | None = None
    #: the other processes that used the most CPU over the point (with the children they reaped):
    #: {"command", "pid", "cpu_s"}, busiest first, so a disturbed point says what disturbed it
    busiest_others: tuple[dict[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def columns(self) -> dict[str, Any]:
        """The record columns: missing figures stay missing (NaN in a frame), never 0."""
        return {
            "steal_pct": self.steal_pct,
            "foreign_cpu_pct": self.foreign_cpu_pct,
            "runqueue_mean": self.runqueue_mean,
            "cpu_mhz": self.cpu_mhz,
            "capacity_pct": self.capacity_pct,
        }


def figures(
    before: ProcStat,
    after: ProcStat,
    wall_s: float,
    own_cpu_s: float | None,
    foreign_cpu_s: float | None,
    runqueue: list[int],
    mhz: list[float],
    ncpus: int,
    irq_in_processes: bool = False,
    kernel_cpu_s: float = 0.0,
) -> Figures:
    """The point's figures from two /proc/stat readings (steal), the CPU time of the run's own and of the
    other processes over the point (`CpuLedger`; None where it cannot be told) and the samples between;
    `irq_in_processes` says how this kernel charged interrupts (`irq_time_in_processes`)."""
    total = after.cpu.total - before.cpu.total
    steal = 100.0 * (after.cpu.steal - before.cpu.steal) / total if total > 0 else None
    capacity = wall_s * ncpus
    foreign = 100.0 * foreign_cpu_s / capacity if foreign_cpu_s is not None and capacity > 0 else None
    return Figures(
        wall_s=round(wall_s, 3),
        steal_pct=_round(steal),
        foreign_cpu_pct=_round(foreign),
        own_cpu_s=_round(own_cpu_s, 3),
        runqueue_mean=_round(sum(runqueue) / len(runqueue) if runqueue else None, 2),
        runqueue_samples=len(runqueue),
        cpu_mhz=_round(sum(mhz) / len(mhz) if mhz else None, 0),
        irq_in_processes=irq_in_processes,
        kernel_cpu_s=_round(kernel_cpu_s, 3),
    )


def irq_time_in_processes(proc: Path = PROC, boot: Path = Path("/boot")) -> bool:
    """Whether this kernel charges interrupt and softirq time to the process it interrupted: true unless
    it was built with CONFIG_IRQ_TIME_ACCOUNTING (or precise accounting) and `tsc=noirqtime` did not turn
    that off. The build's configuration is read from /proc/config.gz or /boot/config-<release>; where
    neither exists the answer is false. Recorded with each point's figures: where it is true, the
    run's own softirq served while another process ran is in that process's time."""
    config = kernel_config(proc, boot)
    if config is None:
        return False
    separate = config.get("CONFIG_IRQ_TIME_ACCOUNTING") == "y" or config.get("CONFIG_VIRT_CPU_ACCOUNTING_GEN") == "y"
    if separate and "noirqtime" in (_read(proc / "cmdline") or ""):
        separate = False
    return not separate


@functools.lru_cache(maxsize=1)
def _irq_time_in_processes_here() -> bool:
    return irq_time_in_processes()


def kernel_config(proc: Path = PROC, boot: Path = Path("/boot")) -> dict[str, str] | None:
    """The running kernel's build options (`CONFIG_X` -> value; unset ones absent), or None if not published."""
    text = None
    try:
        text = gzip.decompress((proc / "config.gz").read_bytes()).decode(errors="replace")
    except (OSError, EOFError, gzip.BadGzipFile):
        release = os.uname().release
        text = _read(boot / f"config-{release}")
    if text is None:
        return None
    return parse_kernel_config(text)


def parse_kernel_config(text: str) -> dict[str, str]:
    options = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.startswith("CONFIG_"):
            options[name.strip()] = value.strip()
    return options


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None or math.isnan(value) else round(value, digits)


class PointSampler:
    """`with PointSampler(cpus, ownership) as s: measure()` then `s.figures`.

    A background thread samples the run queue and clock every SAMPLE_S and the run's processes every
    OWN_EVERY samples; it is stopped and joined on the way out, however the block ends."""

    def __init__(
        self,
        cpus: Iterable[int] | None,
        ownership: Ownership | None = None,
        interval: float = SAMPLE_S,
        own_unknown: str | None = None,
    ):
        self.cpus = sorted(cpus) if cpus else sorted(os.sched_getaffinity(0))
        self.ownership = ownership or Ownership()
        self.interval = interval
        self.figures: Figures | None = None
        self.error: str | None = None
        #: why the run's own CPU time cannot be told for this point (`LXC_OWN_UNKNOWN`): its figures then
        #: leave `own_cpu_s` missing, never a wrong number (other processes' share is summed apart)
        self.own_unknown = own_unknown
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._own = CpuLedger()
        #: every process but the kernel's threads, and which of them are other processes' (the last scan's word)
        self._all = CpuLedger()
        self._others: set[tuple[int, int]] = set()
        self._runqueue: list[int] = []
        self._mhz: list[float] = []

    def __enter__(self) -> PointSampler:
        try:
            self._add(self._scan())
            self._kernel_before = dict(self.ownership.kernel)
            self._before = read_proc_stat()
        except (OSError, ParseError) as exc:  # the point is measured all the same; its figures are missing
            self.error = str(exc)
            return self
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name="kit-interference", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        count = 0
        while not self._stop.wait(self.interval):
            try:
                running = read_proc_stat().procs_running
                mhz = cpu_mhz(self.cpus)
                count += 1
                scanned = self._scan() if count % OWN_EVERY == 0 else None
            except (OSError, ParseError) as exc:
                self.error = str(exc)
                continue
            with self._lock:
                self._runqueue.append(running)
                if mhz is not None:
                    self._mhz.append(mhz)
                if scanned is not None:
                    self._add(scanned)

    def _busiest(self, ticks: dict[tuple[int, int], int], tick: int, count: int = 3) -> tuple[dict[str, Any], ...]:
        """The `count` other processes that used the most CPU over the point (at least a tick)."""
        found = sorted(((t, key) for key, t in ticks.items() if t > 0), reverse=True)
        return tuple(
            {"command": self.ownership.names.get(key, "?"), "pid": key[0], "cpu_s": round(t / tick, 2)}
            for t, key in found[:count]
        )

    def _scan(self) -> tuple[dict, dict, dict, set]:
        """The run's own processes, its cgroups, every process and which are others', from one pass over /proc."""
        own, groups = self.ownership.scan()
        return own, groups, dict(self.ownership.everyone), set(self.ownership.others)

    def _add(self, scanned: tuple[dict, dict, dict, set]) -> None:
        own, groups, everyone, others = scanned
        self._own.add(own, groups)
        self._all.add(everyone, {})
        self._others = (self._others - set(everyone)) | others

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is None:  # nothing could be read at the start
            return
        self._thread.join(timeout=10)
        try:
            after = read_proc_stat()
            wall = time.monotonic() - self._started
            final = self._scan()
            tick = os.sysconf("SC_CLK_TCK")
            with self._lock:
                self._add(final)
                own = final[0]
                others = self._all.others_ticks(final[2], self._others)
                foreign = sum(others.values()) / tick
                self.figures = figures(
                    self._before,
                    after,
                    wall,
                    None if self.own_unknown is not None else self._own.seconds(own, tick),
                    foreign,
                    list(self._runqueue),
                    list(self._mhz),
                    len(after.per_cpu) or os.cpu_count() or 1,
                    _irq_time_in_processes_here(),
                    kernel_seconds(self._kernel_before, self.ownership.kernel, tick),
                )
                self.figures = replace(self.figures, busiest_others=self._busiest(others, tick))
        except (OSError, ParseError) as exc:  # the point stands; its figures are missing, with why
            self.error = str(exc)


# -- the rule ---------------------------------------------------------------------------------
class Rule(BaseModel):
    """When a point counts as disturbed, and how often it is measured at most. The defaults' reasons:

    - max_steal_pct 2: a guest whose hypervisor takes more than 2% of its CPU time runs slower by
      about as much, the size of the smallest effects the claims test (Felter et al.: ≈2-3%).
    - max_foreign_cpu_pct 10: another process using a tenth of the machine (a fifth of a CPU on two)
      competes for caches, memory bandwidth and the scheduler at a level the paper's ±5% bands feel;
      the kit's own background (provenance, the sampler) stays below 1%.
    - max_runqueue: None (not a criterion by default): procs_running counts the run's own threads as
      well and a multi-threaded benchmark fills it itself; recorded, and usable where a plan sets it.
    - min_mhz: None by default: many hosts report no clock, and a low clock can be the governor's
      choice rather than a disturbance; set it (e.g. 90% of the CPU's nominal clock) where the kernel
      reports one, to catch thermal or power throttling.
    - max_attempts 3: a disturbed point is measured at most three times in a row; the last attempt
      counts then, marked disturbed, so a noisy host costs at most three times the time, not forever.
      At the run's end such a point is measured once more, out of the burst that disturbed its
      attempts, where such points are at most a third of the run's (`kitlib.measure.run.rejudge`).
    - foreign_cpu_min_seconds 2: other processes' CPU is judged only over points at least this long.
      Each process's time is read in clock ticks at scans OWN_EVERY × SAMPLE_S apart, and over a point
      of about a second the ticks' rounding, summed over the processes, and the time of a process of
      the run after its last scan (reaped by another: pid 1, the engine) are a large share of the
      interval; shorter points record the figure and are judged on steal, which the kernel counts directly.
    - min_capacity_pct 90: a probed point (memory- or CPU-bound, or a client-server point whose figure is
      CPU time) whose probes (`kitlib.measure.capacity`) found the
      machine below 90% of its usual figure in that run ran on a machine slowed by something the guest
      cannot see (another tenant, the host's clock): the probes' run-to-run spread on a quiet 2-core
      guest is a few %, the smallest band a claim tests ±5%.
    - capacity_outlier_spreads 3: where the run's own probes spread more widely than that (`spread_pct`,
      their median absolute deviation scaled to a standard deviation, in % of the usual figure), the floor
      is 3 such spreads below the usual figure. On a busy cloud guest an idle machine's 0.1 s Linpack probes
      spread by 6 to 13%: a 90% floor then measured again 15 of 27 Redis attempts of a quiet test run and
      kept 4 of its 12 points as disturbed, dips of the host's routine that the point's seconds average
      over; the floor is for a machine slowed beyond its routine, as a 30% dip of minutes is.
    - max_capacity_pct 111 (100 / 0.9, the floor's mirror on a ratio scale): a point whose probes both
      found the machine above 111% of the run's usual figure ran on a different machine from the one the
      run's other points saw: the usual figure changed under the run. In the sample's LXC memory run
      the guest's memory bandwidth rose from about 50 to 85–90 GB/s between two points (probes at 147%,
      133% and 139% of the usual figure), with no steal and no other process to show it. Such a point is
      measured again; its probes move the usual figure towards the new level, so the run's later points
      are judged against the machine they ran on.
    - weather_after 3: once this many points in a row were kept disturbed (each disturbed in every attempt
      it had), a disturbed point is kept after its first attempt: the disturbance is the machine's state
      for now, not a burst between two attempts, and more attempts cost their time without finding a quiet
      one. Replayed over three reproduces on a 2-core cloud guest under steal (`benchmarks/weather_replay.py`),
      3 leaves out 415 of 1,365 attempts and 27 of their minutes, and keeps disturbed 7 of 726 points that a
      later attempt measured undisturbed (1: 494 attempts, 17 points; 4: 387 attempts, 4 points). The first
      undisturbed point ends the streak; the run's end measures such points again where they are few
      (`rejudge`). None: always up to `max_attempts`.
    - remeasure_share 0.25: the attempts a run discards (and the waits for the machine to come back) take
      at most this share of the time its kept points took; past it, a disturbed point is kept after its
      first attempt, saying so, as after a streak. On a 2-core guest under steal the attempts measured again
      took as long as the tools themselves (a quick CPU run: 102 s of discarded attempts beside 28 s of
      kept points), while the harness is to cost at most a quarter of the tools' time. None: no bound.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steal_pct: float | None = Field(2.0, ge=0)
    max_foreign_cpu_pct: float | None = Field(10.0, ge=0)
    max_runqueue: float | None = Field(None, ge=0)
    min_mhz: float | None = Field(None, ge=0)
    max_attempts: int = Field(3, ge=1, le=20)
    foreign_cpu_min_seconds: float = Field(2.0, ge=0)
    min_capacity_pct: float | None = Field(90.0, ge=0, le=100)
    max_capacity_pct: float | None = Field(111.0, ge=100)
    capacity_outlier_spreads: float | None = Field(3.0, gt=0)
    weather_after: int | None = Field(3, ge=1)
    remeasure_share: float | None = Field(0.25, gt=0)

    def reasons(self, fig: Figures | None) -> list[str]:
        """Why the point was disturbed, empty when it was not (missing figures are not a reason)."""
        if fig is None:
            return []
        checks = [
            (fig.steal_pct, self.max_steal_pct, "steal {v:.1f}% > {t:g}%", True),
            (
                fig.foreign_cpu_pct if fig.wall_s >= self.foreign_cpu_min_seconds else None,
                self.max_foreign_cpu_pct,
                "CPU of other processes {v:.1f}% > {t:g}%{busiest}",
                True,
            ),
            (fig.runqueue_mean, self.max_runqueue, "run queue {v:.2f} > {t:g}", True),
            (fig.cpu_mhz, self.min_mhz, "CPU clock {v:.0f} MHz < {t:g} MHz", False),
        ]
        return _over_limits(checks, fig.busiest_others) + self.capacity_reasons(
            fig.capacity_pct, fig.capacity_spread_pct
        )

    def capacity_floor(self, spread_pct: float | None = None) -> float | None:
        """The share of the usual figure below which a probed point ran on a slowed machine: the rule's
        floor, or lower where the run's probes spread so widely that the floor is within their routine."""
        if self.min_capacity_pct is None or spread_pct is None or self.capacity_outlier_spreads is None:
            return self.min_capacity_pct
        return round(max(0.0, min(self.min_capacity_pct, 100.0 - self.capacity_outlier_spreads * spread_pct)), 1)

    def capacity_ceiling(self, spread_pct: float | None = None) -> float | None:
        """The share above which both probes found another machine: the rule's ceiling, or the adapted
        floor's mirror on a ratio scale (a floor of 70% gives 143%); none above a floor of 0."""
        floor = self.capacity_floor(spread_pct)
        if self.max_capacity_pct is None or floor is None or floor == self.min_capacity_pct:
            return self.max_capacity_pct
        return round(max(self.max_capacity_pct, 10_000.0 / floor), 1) if floor > 0 else None

    def capacity_reasons(self, share_pct: float | None, spread_pct: float | None = None) -> list[str]:
        """Why the capacity probes around a point, at `share_pct` of a usual figure, call it disturbed, where
        the run's probes spread by `spread_pct` (the limits then say so)."""
        floor, ceiling = self.capacity_floor(spread_pct), self.capacity_ceiling(spread_pct)
        adapted = ""
        if floor != self.min_capacity_pct:
            adapted = f" ({self.capacity_outlier_spreads:g} × {spread_pct:g}%, the spread of the run's probes)"
        return _over_limits(
            [
                (share_pct, floor, "machine at {v:.0f}% " + SLOWED + " < {t:g}%" + adapted, False),
                (share_pct, ceiling, "machine at {v:.0f}% " + CHANGED + " > {t:g}%" + adapted, True),
            ]
        )


DEFAULT_RULE = Rule()


def _over_limits(checks: list[tuple[Any, Any, str, bool]], busiest: Iterable[dict[str, Any]] = ()) -> list[str]:
    """The reason of each (value, limit, text, whether above is bad) a value crosses; a missing value or
    limit is not a reason."""
    found = []
    for value, limit, text, above in checks:
        if value is None or limit is None:
            continue
        if (value > limit) if above else (value < limit):
            # a command's name is the process's to choose: it goes in as a value, never as a format
            found.append(text.format(v=value, t=limit, busiest=_busiest(busiest)))
    return found


def _busiest(others: Iterable[dict[str, Any]]) -> str:
    """` (busiest: dockerd 1.20 s, sh 0.40 s)`, or nothing where no other process was seen."""
    named = ", ".join(f"{o['command']} {o['cpu_s']:.2f} s" for o in others)
    return f" (busiest: {named})" if named else ""
