"""McCalpin's stream.c (OpenMP build) output, as the authors' run script logged it.

One block per invocation::

    Running stream with numaopts <  --physcpubind=0-31 --interleave=0,1  >, started at …
    Array size = 1650163200, Offset = 0
    Number of Threads requested = 32
    Function      Rate (GB/s)   Avg time     Min time     Max time
    Copy:          41.2869       0.6440       0.6395       0.6686
    …
    Solution Validates

The rates are stream.c's best of its (10) timed iterations, in GB/s (10^9 bytes). A block needs all four
kernels, the thread count and "Solution Validates"; otherwise it is cut off and raises.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers
from kitlib.measure.parsers.felter2014 import numactl_options, split_blocks

TOOL = "stream.c"
KERNELS = ("Copy", "Scale", "Add", "Triad")
_RATE = numbers.pattern(r"^(Copy|Scale|Add|Triad):\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$", re.M)
_THREADS = numbers.pattern(r"^Number of Threads requested = (\d+)", re.M)
_ARRAY = numbers.pattern(r"^Array size = (\d+)", re.M)


def blocks(text: str) -> list[str]:
    return split_blocks(text, "Running stream")


def parse_block(block: str, source: str) -> list[Measurement]:
    """One invocation: a bandwidth per kernel; dims: kernel, threads, array size, numactl options (when
    the header names them)."""
    rates = dict(_RATE.findall(block))
    missing = [k for k in KERNELS if k not in rates]
    threads, array = _THREADS.search(block), _ARRAY.search(block)
    if missing or threads is None or array is None or "Solution Validates" not in block:
        what = f"kernel(s) {', '.join(missing)}" if missing else "thread count, array size or validation"
        raise ParseError(TOOL, source, f"a block lacks its {what} (cut off?)")
    numa = numactl_options(block.splitlines()[0])
    dims = {"threads": int(threads.group(1)), "array_elements": int(array.group(1))}
    if numa:
        dims["numactl"] = numa
    return [Measurement("bandwidth", float(rates[k]), "GB/s", {**dims, "kernel": k}) for k in KERNELS]


def parse(text: str, source: str) -> list[Measurement]:
    """Every block of a log, each measurement with its block's index (`block`)."""
    found = blocks(text)
    if not found:
        raise ParseError(TOOL, source, "no 'Running stream' block")
    return [
        Measurement(m.metric, m.value, m.unit, {**m.dims, "block": i})
        for i, block in enumerate(found)
        for m in parse_block(block, source)
    ]
