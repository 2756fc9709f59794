"""kit-pingpong (cross-CPU wake-ups over a pair of pipes, `kitlib/image/src/kit_pingpong.c`):

    kit-pingpong source 0f3c2a9d1b7e4c55
    cpus 0 1
    round_trips 3000
    seconds 0.141210
    round_trips_per_s 21244.9
    end

The figure is the program's own `round_trips_per_s`; the lines before it say what it timed and must
agree with it, so an output whose rate does not follow from its count and its time is refused.
"""

from __future__ import annotations

import math

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers, ranges
from kitlib.measure.parsers.kit_programs import fields, lines

TOOL = "kit-pingpong"
#: the printed rate against round_trips / seconds: both are rounded (one decimal, microseconds)
AGREEMENT = 1e-3


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    rows = lines(text, TOOL, source)
    keys = ("round_trips", "seconds", "round_trips_per_s")
    found = fields(rows, TOOL, source, keys)
    trips, seconds, rate = (numbers.positive(found[k], TOOL, source, k) for k in keys)
    cpus = [row[1:] for row in rows if row[:1] == ["cpus"]]
    if len(cpus) != 1 or len(cpus[0]) != 2:
        raise ParseError(TOOL, source, "not one `cpus A B` line")
    pair = [numbers.count(word, TOOL, source, "cpu") for word in cpus[0]]
    if not math.isclose(rate, trips / seconds, rel_tol=AGREEMENT):
        raise ParseError(TOOL, source, f"{rate:g} round trips/s does not follow from {trips:g} in {seconds:g} s")
    dims = {"cpus": f"{pair[0]},{pair[1]}"}
    return [Measurement("round_trips_per_s", rate, "1/s", dims), Measurement("round_trips", trips, "count", dims)]
