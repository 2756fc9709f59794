"""The kit's file-operation timer (kitlib/services/fileops.py): one latency per operation in µs.

kit-fileops op=open n=200
kit-fileops latencies_us
9.43
…
kit-fileops end
"""

from __future__ import annotations

from kitlib.core.records import Measurement
from kitlib.measure.parsers import latency_block, ranges

TOOL = "kit-fileops"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    _fields, samples = latency_block.read(text, TOOL, source, "n")
    return latency_block.summary(samples, percentiles=len(samples) >= 100) + [
        Measurement("operations", float(len(samples)), "count")
    ]
