"""What each metric can physically be, declared once beside the parsers that read it.

A value outside its metric's range (a percentile of 199, one nuttcp process at 1000% of a CPU, a
round trip of 0 µs) is no measurement: the output was misread, edited or corrupted, so it is refused
with ParseError naming the value, never recorded. Every registered parser's `parse` is wrapped in
`checked`; a metric named neither in RANGES nor by a prefix of PREFIXES is held only to what `numbers`
already holds it to (finite, not negative unless the metric can be).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement

#: the largest CPU count Linux builds for (x86-64 CONFIG_NR_CPUS with MAXSMP): a process or host at
#: most at 100% of each
MAX_CPUS = 8192


@dataclass(frozen=True)
class Range:
    """The values a metric can take: low ≤ value ≤ high, low itself refused where `above_low`."""

    low: float = 0.0
    high: float = math.inf
    above_low: bool = False
    #: a count of things: a whole number
    whole: bool = False
    why: str = ""

    def holds(self, value: float) -> bool:
        if value < self.low or value > self.high or (self.above_low and value == self.low):
            return False
        return not self.whole or float(value).is_integer()

    def __str__(self) -> str:
        low = f"{'>' if self.above_low else '≥'} {self.low:g}"
        high = "" if math.isinf(self.high) else f" and ≤ {self.high:g}"
        return f"{low}{high}{', whole' if self.whole else ''} ({self.why})"


SHARE = Range(0.0, 100.0, why="a share in %")
ONE_THREAD_CPU = Range(0.0, 100.0, why="one thread's CPU time over the wall time, in %")
ANY_CPUS = Range(0.0, 100.0 * MAX_CPUS, why=f"CPU time over wall time, in %, of at most {MAX_CPUS} CPUs")
ROUND_TRIP = Range(0.0, above_low=True, why="a round trip takes time")
LATENCY = Range(0.0, why="a latency, as the tool rounds it")
SPREAD = Range(0.0, why="a standard deviation")
ELAPSED = Range(0.0, above_low=True, why="a run takes time")
COUNT = Range(0.0, whole=True, why="a count")
FRACTION = Range(0.0, 1.0, why="a fraction")
PERCENTILE = Range(0.0, 100.0, why="a percentile")

#: metric -> its range (before PREFIXES)
RANGES: dict[str, Range] = {
    "hit_rate": SHARE,
    "cpu_tx": ONE_THREAD_CPU,
    "cpu_rx": ONE_THREAD_CPU,
    "cpu_host": ANY_CPUS,
    "cpu_remote": ANY_CPUS,
    "server_cpu_utilization": ANY_CPUS,
    "rtt_stddev": SPREAD,
    "latency_stddev": SPREAD,
    "duration": ELAPSED,
    "elapsed": ELAPSED,
    "error_fraction": FRACTION,
    "ratio": Range(0.0, above_low=True, why="compressed over input bytes"),
    "processes": Range(1.0, whole=True, why="a run has a process"),
}
#: metric name prefix -> its range, for the families of metrics
PREFIXES: dict[str, Range] = {"rtt_": ROUND_TRIP, "window_rtt_": ROUND_TRIP, "latency_": LATENCY, "clat_": LATENCY}
#: units whose values are counts, whatever the metric
UNITS: dict[str, Range] = {"count": COUNT, "requests": COUNT}


def range_of(metric: str, unit: str) -> Range | None:
    """The range a metric in `unit` is held to, or None."""
    if metric in RANGES:
        return RANGES[metric]
    family = next((r for prefix, r in PREFIXES.items() if metric.startswith(prefix)), None)
    return family or UNITS.get(unit)


def check(found: Iterable[Measurement], tool: str, source: str) -> None:
    """Refuse the first measurement outside its metric's range, or whose `percentile` is no percentile."""
    for m in found:
        bounds = range_of(m.metric, m.unit)
        if bounds is not None and not bounds.holds(m.value):
            raise ParseError(tool, source, f"{m.metric} {m.value:g} {m.unit} {_where(m)}is not {bounds}")
        pct = m.dims.get("percentile")
        if pct is not None and not PERCENTILE.holds(float(pct)):
            raise ParseError(tool, source, f"{m.metric} at percentile {pct:g}: a percentile is {PERCENTILE}")


def _where(m: Measurement) -> str:
    return f"{dict(m.dims)} " if m.dims else ""


def checked(tool: str) -> Callable[[Callable[..., list[Measurement]]], Callable[..., list[Measurement]]]:
    """Decorate a parser's `parse(text, source, …)` so what it returns is held to the ranges above."""

    def wrap(parse: Callable[..., list[Measurement]]) -> Callable[..., list[Measurement]]:
        @functools.wraps(parse)
        def parse_checked(text: str, source: str, *args: Any, **kwargs: Any) -> list[Measurement]:
            found = parse(text, source, *args, **kwargs)
            check(found, tool, source)
            return found

        parse_checked.ranges_checked = True  # type: ignore[attr-defined]
        return parse_checked

    return wrap
