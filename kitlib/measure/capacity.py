"""The machine's capacity around a point: a short run of the kit's own STREAM (memory-bound points),
LINPACK (CPU-bound points, and client-server points whose figure is CPU time: Redis with many requests
in flight, sysbench's OLTP, nuttcp, the web tier, the scale-out instances) or wake-up ping-pong
(client-server points that wait on the other side: a round trip of sockperf or netperf, Redis with few
requests in flight) on the point's CPUs, server's and client's, just before and just after it, against
the usual figure of the same probe in the same run.

Why: on a cloud guest another tenant's memory traffic, or the host lowering the clock, slows a point
while leaving no trace in anything the guest can count: no steal, no process of its own. In the
sample's STREAM one native point read 28.9 GB/s beside 44.3 and 42.1, with 0.0% steal and 0.7% of the
machine in other processes. A probe bracketing the point sees the machine the point saw. The probe
runs outside the point's measured interval and on the host, whatever the environment (a container or
guest shares the host's memory and CPUs). A busy host also slows the wake-ups between a guest's CPUs
(each an interrupt through the hypervisor) more than its arithmetic: around one-connection Redis points
the LINPACK probe hardly followed the points' rates where the wake-up probe did
(`benchmarks/probe_tracks_point.py`).

`capacity_pct` is the lower of the two probes in % of the run's usual figure: the median of every
probe of that kind the run made so far, seeded by `SEED_READINGS` probes before its first point. The
interference rule (`Rule.min_capacity_pct`, lowered where the probes' own spread is wide:
`Rule.capacity_floor`) calls a point below it disturbed, and one whose probes are
both above `Rule.max_capacity_pct` (the usual figure changed under the run) too; at the run's end every
point is judged again against the median of the whole run's probes (`kitlib.measure.run.rejudge`), which
finds the points measured before such a change. A host without a C
compiler or OpenBLAS has no probe: the figure is missing, never a reason.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import scipy.stats

from kitlib.core import caches, paths
from kitlib.core.errors import ParseError
from kitlib.core.procs import child_env
from kitlib.measure.image import SOURCES
from kitlib.measure.parsers import kit_linpack, kit_pingpong, kit_stream

#: probe kinds: the program, its arguments and the figure read from it
MEMORY, CPU, WAKEUP = "memory", "cpu", "wakeup"
#: each kind's program among the kit's own (`kitlib/measure/image/src`)
PROGRAMS = {MEMORY: "kit-stream", CPU: "kit-linpack", WAKEUP: "kit-pingpong"}
#: probes taken before a run's first point of a kind, so its first point has a usual figure to meet, and
#: a spread (`spread_pct`) from its seeds and its own two probes
SEED_READINGS = 5
#: a probe's time bound (it takes about 0.2 s on a 2-core guest)
PROBE_TIMEOUT_S = 60.0
#: Linpack's order in the CPU probe (about 2 GFLOP a trial: tens of ms on a 2-core guest)
LINPACK_N = 1500
LINPACK_TRIALS = 3
STREAM_NTIMES = 5
#: round trips of the wake-up probe between the point's first and last CPU (about 0.05 s on a quiet 2-vCPU
#: guest, where a round trip across CPUs costs 13 µs, and 0.15 s where it costs 47 µs on a busy one)
PINGPONG_ROUND_TRIPS = 3000
#: how long a point found disturbed by a slowed machine waits, at most, for the machine to come back before
#: it is measured again; the dips seen on a cloud guest lasted 1 to 20 s, and attempts taken back to back
#: inside one (3 s apart) all read it: a wait lets the next attempt see the machine the others did
RECOVERY_WAIT_S = 20.0
#: seconds between the probes of that wait
RECOVERY_POLL_S = 1.0
#: a point's probe before it is the previous point's probe after it, when that one was taken this recently
#: (the two points are neighbours in one environment: only the unit's bookkeeping ran between them), so
#: neighbouring points share one probe instead of taking two back to back
SHARED_PROBE_S = 2.0
#: build folders this process could not fill (no compiler, OpenMP or OpenBLAS)
_UNBUILDABLE: set[Path] = set()


def stream_elements(llc_bytes: int | None = None) -> int:
    """Elements per array: the three arrays together at least twice the last-level cache, so the probe
    measures memory, not cache."""
    llc = llc_bytes or caches.last_level_total() or caches.FALLBACK_LLC
    return max(2_000_000, (2 * llc) // (3 * 8) + 1)


@functools.cache
def _sources_digest() -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(SOURCES.iterdir()))).hexdigest()[:16]


def _build_dir() -> Path:
    return paths.cache_root() / "host-programs" / _sources_digest()


def host_program(name: str) -> Path | None:
    """The kit's program built on this host (once, kept in the cache by the sources' digest); None where
    it cannot be built (no C compiler, OpenMP or OpenBLAS)."""
    folder = _build_dir()
    if (folder / name).exists():
        return folder / name
    if shutil.which("cc") is None or folder in _UNBUILDABLE:
        return None
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    try:
        built = subprocess.run(
            ["sh", str(SOURCES / "build.sh"), str(scratch)], capture_output=True, text=True, timeout=300
        )
        if built.returncode == 0:
            try:
                os.rename(scratch, folder)  # atomic: a concurrent run finds all programs or none
            except OSError:  # another run's build got there first: that one is used
                pass
    except (OSError, subprocess.TimeoutExpired):
        pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not (folder / name).exists():
        _UNBUILDABLE.add(folder)  # tried once in this process: no build before every point
    return folder / name if (folder / name).exists() else None


def probe_argv(kind: str, program: Path, cpus: list[int]) -> list[str]:
    if kind == WAKEUP:  # the program pins its two processes itself: the point's first and last CPU
        ends = sorted(cpus or os.sched_getaffinity(0))
        return [str(program), str(PINGPONG_ROUND_TRIPS), str(ends[0]), str(ends[-1])]
    args = [str(stream_elements()), str(STREAM_NTIMES)] if kind == MEMORY else [str(LINPACK_N), str(LINPACK_TRIALS)]
    pin = ["taskset", "-c", ",".join(map(str, cpus))] if cpus and shutil.which("taskset") else []
    return [*pin, str(program), *args]


def read_probe(kind: str, output: str, source: str = "capacity probe") -> float:
    """The probe's figure: STREAM Triad's best pass in GB/s, Linpack's GFLOPS over its counted trials, or
    the round trips per second between two CPUs."""
    if kind == MEMORY:
        return next(m.value for m in kit_stream.parse(output, source) if m.dims.get("kernel") == "Triad")
    if kind == WAKEUP:
        return next(m.value for m in kit_pingpong.parse(output, source) if m.metric == "round_trips_per_s")
    return next(m.value for m in kit_linpack.parse(output, source) if m.metric == "gflops")


def run_probe(kind: str, cpus: list[int]) -> float | None:
    """One probe on `cpus` (all of them the point uses); None when there is no probe or it failed."""
    program = host_program(PROGRAMS[kind])
    if program is None:
        return None
    env = {**child_env(), "OMP_NUM_THREADS": str(len(cpus) or os.cpu_count() or 1)}
    try:
        done = subprocess.run(
            probe_argv(kind, program, cpus), capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, env=env
        )
        return read_probe(kind, done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ParseError, StopIteration):
        return None


def spread_pct(values: list[float]) -> float | None:
    """How widely probes spread, in % of their median: the median absolute deviation scaled to a normal
    distribution's standard deviation, which a few probes of a dip or of another regime barely move
    (`interference.Rule.capacity_floor`); None with fewer than SEED_READINGS probes."""
    if len(values) < SEED_READINGS:
        return None
    middle = statistics.median(values)
    deviation = scipy.stats.median_abs_deviation(values, scale="normal")
    return round(100.0 * float(deviation) / middle, 1) if middle > 0 else None


@dataclass
class RunCapacity:
    """The probes of one run, per kind: the usual figure and each point's share of it."""

    cpus: list[int]
    readings: dict[str, list[float]] = field(default_factory=dict)
    probe: Callable[[str, list[int]], float | None] = run_probe
    #: seconds spent probing so far (the harness's share a timing table shows)
    spent_s: float = 0.0
    #: probes not taken because a neighbour's served (`SHARED_PROBE_S`)
    shared: int = 0
    _last_after: tuple[str, float, float] | None = field(default=None, repr=False)

    def usual(self, kind: str) -> float | None:
        found = self.readings.get(kind) or []
        return statistics.median(found) if len(found) >= SEED_READINGS else None

    def before(self, kind: str) -> float | None:
        """Probe before a point, seeding the run's usual figure first if this is its first point of `kind`;
        the previous point's probe after it where that was just taken (`SHARED_PROBE_S`)."""
        last, self._last_after = self._last_after, None
        if last is not None and last[0] == kind and time.monotonic() - last[2] <= SHARED_PROBE_S:
            self.shared += 1
            return last[1]
        known = self.readings.setdefault(kind, [])
        while len(known) < SEED_READINGS:
            value = self._probe(kind)
            if value is None:
                return None
            known.append(value)
        return self._take(kind)

    def after(self, kind: str) -> float | None:
        value = self._take(kind)
        self._last_after = None if value is None else (kind, value, time.monotonic())
        return value

    def forget_neighbour(self) -> None:
        """The next point is not a neighbour of the last (an environment stopped or started between them)."""
        self._last_after = None

    def _take(self, kind: str) -> float | None:
        value = self._probe(kind)
        if value is not None:
            self.readings.setdefault(kind, []).append(value)
        return value

    def _probe(self, kind: str) -> float | None:
        started = time.monotonic()
        try:
            return self.probe(kind, self.cpus)
        finally:
            self.spent_s += time.monotonic() - started

    def recover(self, kind: str, floor_pct: float, timeout: float = RECOVERY_WAIT_S) -> tuple[float, bool] | None:
        """Probe every RECOVERY_POLL_S until the machine is back at `floor_pct` of its usual figure, at most
        `timeout` seconds: (seconds waited, whether it came back); None when there is no probe or usual
        figure to judge by. These probes do not join the usual figure: they are taken because the machine
        was slow."""
        usual = self.usual(kind)
        if not usual:
            return None
        started = time.monotonic()
        while True:
            value = self._probe(kind)
            if value is None:
                return None
            waited = round(time.monotonic() - started, 1)
            if 100.0 * value / usual >= floor_pct:
                return waited, True
            if waited + RECOVERY_POLL_S > timeout:
                return waited, False
            time.sleep(RECOVERY_POLL_S)

    def spread_pct(self, kind: str) -> float | None:
        """How widely the run's probes of `kind` spread so far (`spread_pct`)."""
        return spread_pct(self.readings.get(kind) or [])

    def share_pct(self, kind: str, before: float | None, after: float | None) -> float | None:
        """The lower of the two probes in % of the run's usual figure (None when either is missing)."""
        usual = self.usual(kind)
        if before is None or after is None or not usual:
            return None
        return round(100.0 * min(before, after) / usual, 1)
