"""How long a plan will take on this host, known before it starts.

Three sources, in order: (1) a model of the workload: size-bound tools (PXZ, Linpack, STREAM,
RandomAccess) divide their work by this host's rates, measured once by a short calibration of the
kit's own programs and kept in the cache; time-bound tools (fio, sysbench, redis-benchmark, nuttcp,
sockperf) run for the durations their parameters say, plus their set-up; (2) for a workload without a
model, this host's own earlier points of it in the same kind of environment (the median of their
measured seconds); (3) a stated default per point. Every environment start and stop adds its kind's
cost. Software emulation (TCG) multiplies the compute of size-bound points by `EMULATION_SLOWDOWN`; a
time-bound point (`Workload.time_bound`) runs its stated time there too.

The estimate is also a guard: a point whose estimate exceeds the time its command is allowed is
refused when the plan is made, naming the parameter to change, instead of being killed half an
hour later.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core import paths, services
from kitlib.core.errors import PlanError
from kitlib.measure import capacity
from kitlib.measure.parsers import kit_gups, kit_linpack, kit_stream
from kitlib.specs.labels import is_emulated, parse_label

#: seconds to start and stop one environment of a kind (segments of a run), before history refines it
START_STOP_SECONDS = {
    "native": 0.5,
    "docker": 2.0,
    "podman": 3.0,
    "podman-rootless": 4.0,
    "lxc": 12.0,
    "nspawn": 4.0,
    "vm": 90.0,
    "docker-in-vm": 150.0,
}
#: how much slower compute runs under software emulation than on the host's CPU (a round figure from
#: QEMU TCG guests of the sample: Linpack 30-60x, xz and the servers 10-30x)
EMULATION_SLOWDOWN = 30.0
#: a point of a workload the kit has no model or history for
DEFAULT_POINT_SECONDS = 2.0
#: the capacity probes around a probed point (`kitlib.measure.capacity`): two of 0.1 to 0.4 s on a 2-core
#: guest, with their process starts; a point's history already holds them
PROBES_SECONDS = 1.0
#: rates assumed where the calibration cannot run (no C compiler): a modest laptop's
FALLBACK_RATES = {"gflops": 10.0, "stream_gbs": 8.0, "gups": 0.03, "xz_mbps": 5.0}
CALIBRATION_VERSION = 2
#: the Linpack order calibrated: OpenBLAS reaches its speed only on matrices of a few thousand (on a
#: 2-core EPYC guest 40 GFLOPS at N = 2000 and 88 at the quick profile's 6000, so a rate taken at 2000
#: forecast a CPU run at twice its time); 4000 takes about a second there, a few on a laptop
LINPACK_CALIBRATION_N = 4000
#: xz -2 compresses blocks of 6 MiB (three times its 2 MiB dictionary), one per thread: the calibration's
#: corpus gives every thread one, as a run's larger corpus keeps them all busy (a 4 MiB corpus is a single
#: block, one thread: 3 MB/s measured on a 2-core guest where the run's 32 MiB read 4.6), within these bounds
XZ_BLOCK_MIB = 6
XZ_CORPUS_MIB = (6, 96)
#: a calibration older than this is made again (a machine's load and clock change); one made while the
#: machine was busier than its CPUs (load average above the CPU count) only for an hour
CALIBRATION_MAX_AGE_S = 7 * 24 * 3600
CALIBRATION_UNDER_LOAD_MAX_AGE_S = 3600
#: each calibration program runs this many times and its best rate counts (a busy moment is not the host)
CALIBRATION_TRIES = 2


@dataclass
class Rates:
    """This host's speed at what the size-bound workloads do (all CPUs the kit may use)."""

    gflops: float
    stream_gbs: float
    gups: float
    xz_mbps: float
    measured: bool = True
    source: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("gflops", "stream_gbs", "gups", "xz_mbps", "measured", "source")}


@dataclass
class Estimate:
    """Seconds per unit and per environment segment, with where each figure came from."""

    unit_seconds: list[float] = field(default_factory=list)
    start_stop_seconds: float = 0.0
    sources: dict[str, int] = field(default_factory=dict)
    longest: tuple[str, float] = ("", 0.0)

    @property
    def total(self) -> float:
        return sum(self.unit_seconds) + self.start_stop_seconds


def _calibration_path() -> Path:
    return paths.cache_root() / f"calibration-v{CALIBRATION_VERSION}.json"


def rates(*, refresh: bool = False) -> Rates:
    """This host's rates, calibrated once (a few seconds) and then read from the cache."""
    path = _calibration_path()
    if not refresh:
        try:
            kept = json.loads(path.read_text())
            limit = CALIBRATION_UNDER_LOAD_MAX_AGE_S if kept.pop("under_load", False) else CALIBRATION_MAX_AGE_S
            if time.time() - path.stat().st_mtime < limit:
                return Rates(**kept)
        except (OSError, ValueError, TypeError):
            pass
    found = _calibrate()
    path.parent.mkdir(parents=True, exist_ok=True)
    under_load = os.getloadavg()[0] > (os.cpu_count() or 1)
    path.write_text(json.dumps({**found.as_dict(), "under_load": under_load}, indent=1))
    return found


def _calibrate() -> Rates:
    """Short runs of the kit's own programs (built once per host, `capacity.host_program`) on every CPU
    of this host, plus xz on a small corpus."""
    programs = {name: capacity.host_program(name) for name in ("kit-stream", "kit-gups", "kit-linpack")}
    if any(program is None for program in programs.values()):
        return Rates(**FALLBACK_RATES, measured=False, source="defaults: the kit's programs do not build here")

    def best(parse, argv: list[str], metric: str) -> float:
        rates = []
        for _ in range(CALIBRATION_TRIES):
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
            rates.append(statistics.fmean(m.value for m in parse(out, "calibration") if m.metric == metric))
        return max(rates)

    load = os.getloadavg()[0]
    stream = best(kit_stream.parse, [str(programs["kit-stream"]), "8000000", "4"], "bandwidth")
    gups = best(kit_gups.parse, [str(programs["kit-gups"]), "22", "1"], "gups")
    linpack = best(kit_linpack.parse, [str(programs["kit-linpack"]), str(LINPACK_CALIBRATION_N), "2"], "gflops")
    with tempfile.TemporaryDirectory(prefix="kitlib-calibrate-") as folder:
        xz = max(_xz_rate(Path(folder)) for _ in range(CALIBRATION_TRIES))
    return Rates(
        gflops=linpack,
        stream_gbs=stream,
        gups=gups,
        xz_mbps=xz,
        source=f"calibrated {time.strftime('%Y-%m-%d %H:%M')} at load {load:.1f} on {os.cpu_count()} CPUs",
    )


def xz_calibration_bytes(threads: int) -> int:
    """The calibration corpus for `threads` xz threads: a block each, within `XZ_CORPUS_MIB`."""
    low, high = XZ_CORPUS_MIB
    return min(max(XZ_BLOCK_MIB * threads, low), high) * 2**20


def _xz_rate(folder: Path) -> float:
    corpus = folder / "corpus.txt"
    threads = len(os.sched_getaffinity(0))
    size = xz_calibration_bytes(threads)
    if not corpus.exists():
        subprocess.run(services.command("corpus", corpus, size, 1_000_000_000), check=True, timeout=120)
    started = time.monotonic()
    with open(corpus, "rb") as data:
        subprocess.run(
            ["xz", f"-T{threads}", "-2", "-c"], stdin=data, stdout=subprocess.DEVNULL, check=True, timeout=300
        )
    return size / 1e6 / max(time.monotonic() - started, 1e-3)


def _history(experiment: str, root: Path | None = None) -> dict[tuple[str, str, str], list[float]]:
    """Measured seconds of earlier done points here: (workload, environment kind, point key) -> seconds."""
    found: dict[tuple[str, str, str], list[float]] = {}
    base = (root or paths.results_root()) / experiment
    for unit_file in base.glob("*/units/*.json"):
        try:
            unit = json.loads(unit_file.read_text())
        except (OSError, ValueError):
            continue
        if unit.get("status") != "ok" or not isinstance(unit.get("seconds"), (int, float)):
            continue
        kind = parse_label(str(unit.get("env"))).kind if unit.get("env") else "?"
        key = (str(unit.get("workload")), kind, json.dumps(unit.get("point") or {}, sort_keys=True))
        found.setdefault(key, []).append(float(unit["seconds"]))
    return found


def estimate(
    plan,
    units: Iterable,
    *,
    history_root: Path | None = None,
    calibrated: Rates | None = None,
    with_history: bool = True,
) -> Estimate:
    """The plan's time on this host: every unit (history, else model, else default) and every environment
    start and stop. `units` are the plan's units in order (`runner.plan_units`). `with_history=False`
    leaves out the earlier points, so that nothing a run measured enters the figure."""
    units = list(units)
    speed = calibrated or rates()
    history = _history(plan.experiment, history_root) if with_history else {}
    result = Estimate()
    for unit in units:
        spec = parse_label(unit.env)
        slow = slowdown(unit.workload, unit.env)
        seen = history.get((unit.workload.name, spec.kind, json.dumps(unit.point, sort_keys=True)))
        modelled = unit.workload.estimate_seconds(unit.point, speed)
        if seen and modelled is None:
            seconds, source = statistics.median(seen), "history"
        elif modelled is not None:
            seconds, source = modelled * slow, "model"
        else:
            seconds, source = DEFAULT_POINT_SECONDS * slow, "default"
        if source != "history" and unit.workload.probe_kind(unit.point) and getattr(unit, "pairing", None) is None:
            seconds += PROBES_SECONDS  # a duet's points are not probed: what moves the host moves both sides
        result.unit_seconds.append(seconds)
        result.sources[source] = result.sources.get(source, 0) + 1
        if seconds > result.longest[1]:
            result.longest = (unit.key, seconds)
    for _, group in itertools.groupby(units, key=_segment):  # each run of one environment (or duet): start, stop
        for env in dict.fromkeys(unit.env for unit in group):
            result.start_stop_seconds += START_STOP_SECONDS.get(parse_label(env).kind, 10.0)
    return result


def _segment(unit) -> str:
    """What one start and stop serves: an environment's consecutive units, or a duet's (both its sides).
    A duet's two sides run at once on half the CPUs each: at about half a side's whole-machine rate, so
    the pair takes what the two points' whole-machine estimates add up to."""
    pairing = getattr(unit, "pairing", None)
    return unit.env if pairing is None else pairing.duet


def slowdown(workload, label: str) -> float:
    """How much longer a point of `workload` takes in environment `label` than on the host's CPU."""
    return EMULATION_SLOWDOWN if is_emulated(label) and not workload.time_bound else 1.0


def refuse_overlong(experiment: str, workloads: Sequence, environments: Sequence[str]) -> None:
    """PlanError for a point whose modelled time exceeds what its command is allowed, naming the
    parameter that sets its size; checked when the plan is made, before anything starts."""
    speed: Rates | None = None
    for workload in workloads:
        for point in workload.points():
            if workload.size_parameter is None:
                continue
            speed = speed or rates()
            seconds = workload.estimate_seconds(point, speed)
            if seconds is None:
                continue
            for label in environments:
                if not workload.applies_to(label):
                    continue
                need = seconds * slowdown(workload, label)
                if need > workload.command_timeout:
                    raise PlanError(
                        f"{experiment}: a {workload.name} point in {label} would take about {minutes(need)} on this "
                        f"host ({speed.source or 'rates'}), more than the {minutes(workload.command_timeout)} its "
                        f"command may run; make -p {workload.size_parameter} smaller"
                    )


def describe(found: Estimate, speed: Rates) -> str:
    """One line a person reads before a run: the total, what it rests on, the longest point."""
    sources = ", ".join(f"{count} by {source}" for source, count in sorted(found.sources.items()))
    line = f"estimated time here: {minutes(found.total)} ({len(found.unit_seconds)} points: {sources}"
    line += f"; environments started and stopped: {minutes(found.start_stop_seconds)})"
    if found.longest[0]:
        line += f"; longest point {found.longest[0]} about {minutes(found.longest[1])}"
    return line + f"; rates {speed.source}"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{math.ceil(seconds)} s"
