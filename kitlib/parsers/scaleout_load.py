"""The load script of the scale-out experiment: several redis-benchmark runs at once, one wall clock.

The script on the peer starts every loader together, each running its GET then its SET requests
(the post's 75% GET / 25% SET as a request count), and prints each run's `--csv` output after a
section line, then the wall time of the whole bundle:

    == loader 0 GET 30000
    "test","rps","avg_latency_ms",...
    "GET __rand_int__","51234.56","0.512",...
    == loader 0 SET 10000
    ...
    == elapsed 1.234567

The aggregate throughput is every request of every loader over that wall time (the runs overlap
but do not end together, so their own rates must not be summed). Mean latency is the mean over all
requests. Each redis-benchmark section is checked by its own parser.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.parsers import redis_benchmark
from kitlib.records import Measurement

TOOL = "kit-scaleout-load"
_SECTION = re.compile(r"^== loader (\d+) ([A-Z]+) (\d+)\s*$")
_ELAPSED = re.compile(r"^== elapsed ([0-9.]+)\s*$")


def parse(text: str, source: str) -> list[Measurement]:
    sections: list[tuple[int, str, int, list[str]]] = []
    elapsed: float | None = None
    for line in text.splitlines():
        head, end = _SECTION.match(line), _ELAPSED.match(line)
        if head:
            sections.append((int(head[1]), head[2], int(head[3]), []))
        elif end:
            elapsed = float(end[1])
        elif sections:
            sections[-1][3].append(line)
    if not sections:
        raise ParseError(TOOL, source, "no '== loader' section (the load script did not run?)")
    if elapsed is None:
        raise ParseError(TOOL, source, "no '== elapsed' line (the load script was cut short?)")
    if elapsed <= 0:
        raise ParseError(TOOL, source, f"elapsed time {elapsed} s is not positive")
    requests = 0
    weighted_latency = 0.0
    loaders: set[int] = set()
    for loader, op, count, lines in sections:
        found = redis_benchmark.parse("\n".join(lines), f"{source} (loader {loader} {op})")
        mean = next((m.value for m in found if m.metric == "latency_mean"), None)
        if mean is None:
            raise ParseError(TOOL, source, f"loader {loader} {op}: no mean latency")
        requests += count
        weighted_latency += mean * count
        loaders.add(loader)
    return [
        Measurement("throughput", requests / elapsed, "req/s", {"op": "mix"}),
        Measurement("latency_mean", weighted_latency / requests, "us", {"op": "mix"}),
        Measurement("duration", elapsed, "s", {"op": "mix"}),
        Measurement("loaders", float(len(loaders)), "count", {"op": "mix"}),
    ]
