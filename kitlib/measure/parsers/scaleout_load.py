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
requests, missing where a section's requests reached redis-benchmark's 3-s latency ceiling (its mean
is then no mean). Each redis-benchmark section is checked by its own parser, and must hold the one test
its section line names.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import bundle, numbers, ranges, redis_benchmark

TOOL = "kit-scaleout-load"
_SECTION = numbers.pattern(r"^== loader (\d+) ([A-Z]+) (\d+)\s*$")


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    sections, elapsed = bundle.split(text, source, TOOL, _SECTION, "== loader")
    requests = 0
    weighted_latency = 0.0
    clamped = False  # a section whose requests reached redis-benchmark's latency ceiling has no mean
    loaders: set[int] = set()
    for head, output in sections:
        loader, op, count = int(head[1]), head[2], int(head[3])
        if count == 0:
            raise ParseError(TOOL, source, f"loader {loader} {op}: a section of 0 requests")
        found = redis_benchmark.parse(output, f"{source} (loader {loader} {op})", ops=(op,))
        mean = next((m.value for m in found if m.metric == "latency_mean"), None)
        clamped = clamped or mean is None
        requests += count
        weighted_latency += (mean or 0.0) * count
        loaders.add(loader)
    mean_latency = [] if clamped else [Measurement("latency_mean", weighted_latency / requests, "us", {"op": "mix"})]
    return [
        Measurement("throughput", requests / elapsed, "req/s", {"op": "mix"}),
        *mean_latency,
        Measurement("duration", elapsed, "s", {"op": "mix"}),
        Measurement("loaders", float(len(loaders)), "count", {"op": "mix"}),
    ]
