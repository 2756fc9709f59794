"""`redis-cli INFO stats` before and after a GET phase: the phase's hit rate.

    # Stats
    keyspace_hits:50001
    keyspace_misses:1

`parse` takes one INFO output and returns its counters; `hit_rate` takes two (before, after) and
returns the share of the phase's lookups that found their key, in %.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "redis-info"
_LINES = {name: numbers.pattern(rf"^{name}:(\S*?)\r?$", re.M) for name in ("keyspace_hits", "keyspace_misses")}


def counters(text: str, source: str) -> dict[str, int]:
    """Each counter from its one line (`keyspace_hits:50001`, with INFO's `\\r\\n` line ends)."""
    text = lines.finished(text)
    found = {}
    for name, pattern in _LINES.items():
        line = lines.one(pattern, text, TOOL, source, f"'{name}:' line")
        found[name] = numbers.count(line[1], TOOL, source, name)
    return found


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    """The cumulative counters of one INFO output (for `kit parse redis-info FILE`)."""
    return [Measurement(name, float(value), "count") for name, value in counters(text, source).items()]


def hit_rate(before: str, after: str, source: str) -> Measurement:
    """Hits / (hits + misses) between two INFO outputs, in %; a phase with no lookups raises."""
    start, end = counters(before, source), counters(after, source)
    hits = end["keyspace_hits"] - start["keyspace_hits"]
    misses = end["keyspace_misses"] - start["keyspace_misses"]
    if hits < 0 or misses < 0 or hits + misses == 0:
        raise ParseError(TOOL, source, f"no lookups between the two INFO outputs (hits {hits}, misses {misses})")
    return Measurement("hit_rate", 100.0 * hits / (hits + misses), "%", {"op": "GET"})
