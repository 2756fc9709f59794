"""The authors' modified gups.c (HPCC RandomAccess, one process) as their run script logged it.

    Running gups with numaopts <  --physcpubind=0-31 --interleave=0,1  >, started at …
    Main table size   = 2^33 = 8589934592 words
    Number of updates = 1000000000
    Real time used = 78.895083 seconds
    0.012675061 Billion(10^9) Updates    per second [GUP/s]
    Found 1 errors in 8589934592 locations (passed).

A block without its GUP/s line or its verification line ("passed") is cut off and raises.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers
from kitlib.measure.parsers.felter2014 import numactl_options, split_blocks

TOOL = "gups"
_GUPS = numbers.pattern(r"^\s*([0-9.]+) Billion\(10\^9\) Updates\s+per second \[GUP/s\]", re.M)
_TABLE = numbers.pattern(r"^Main table size\s+= 2\^(\d+) = (\d+) words", re.M)
_VERIFY = numbers.pattern(r"^Found (\d+) errors in (\d+) locations \((passed|failed)\)", re.M)


def blocks(text: str) -> list[str]:
    return split_blocks(text, "Running gups")


def parse_block(block: str, source: str) -> list[Measurement]:
    rate, table, verify = _GUPS.search(block), _TABLE.search(block), _VERIFY.search(block)
    if rate is None or table is None or verify is None:
        raise ParseError(TOOL, source, "a block lacks its GUP/s, table size or verification line (cut off?)")
    if verify.group(3) != "passed":
        raise ParseError(TOOL, source, f"a block failed verification ({verify.group(1)} errors)")
    dims: dict[str, object] = {"table_words": int(table.group(2))}
    numa = numactl_options(block.splitlines()[0])
    if numa:
        dims["numactl"] = numa
    return [Measurement("gups", float(rate.group(1)), "GUP/s", dims)]


def parse(text: str, source: str) -> list[Measurement]:
    found = blocks(text)
    if not found:
        raise ParseError(TOOL, source, "no 'Running gups' block")
    return [
        Measurement(m.metric, m.value, m.unit, {**m.dims, "block": i})
        for i, block in enumerate(found)
        for m in parse_block(block, source)
    ]
