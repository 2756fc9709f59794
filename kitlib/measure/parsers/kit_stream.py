"""kit-stream (STREAM's four kernels, `kitlib/image/src/kit_stream.c`):

    kit-stream source 8fa9488b93a86ba8
    elements 20000000
    bytes_per_array 160000000
    threads 2
    ntimes 10
    kernel Copy best_MBps 23547.1 avg_s 0.015579 min_s 0.013590 max_s 0.017351
    passes Copy 0.013771 0.013590 …
    … (Scale, Add, Triad)
    validation ok
    end

Bandwidth per kernel in GB/s (10^9 bytes/s, as hpcc reports STREAM) from the best counted pass, as
STREAM defines its rate; the figure is the whole system's (all threads on shared arrays).
"""

from __future__ import annotations

from decimal import Decimal

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import ranges
from kitlib.measure.parsers.kit_programs import fields, lines, number

TOOL = "kit-stream"
KERNELS = ("Copy", "Scale", "Add", "Triad")
METHOD = "best pass, all threads on shared arrays (kit-stream)"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    rows = lines(text, TOOL, source)
    if ["validation", "ok"] not in rows:
        raise ParseError(TOOL, source, "the arrays did not validate")
    sizes = fields(rows, TOOL, source, ("elements", "threads", "ntimes"))
    rates: dict[str, float] = {}
    for row in rows:
        if row[:1] == ["kernel"]:
            if len(row) != 10 or row[2] != "best_MBps" or row[1] not in KERNELS or row[1] in rates:
                raise ParseError(TOOL, source, f"unexpected kernel line: {' '.join(row)!r}")
            number(row[3], TOOL, source, f"{row[1]} best_MBps")
            rates[row[1]] = float(Decimal(row[3]) / 1000)  # MB/s to GB/s without binary rounding
    missing = [k for k in KERNELS if k not in rates]
    if missing:
        raise ParseError(TOOL, source, f"no result for kernel(s) {', '.join(missing)}")
    found = [
        Measurement(
            "bandwidth",
            rates[kernel],
            "GB/s",
            {"benchmark": "STREAM", "kernel": kernel, "variant": "System", "method": METHOD},
        )
        for kernel in KERNELS
    ]
    found.append(Measurement("vector_size", sizes["elements"], "count", {"benchmark": "STREAM"}))
    return found
