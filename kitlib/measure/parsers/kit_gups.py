"""kit-gups (HPC Challenge RandomAccess, `kitlib/image/src/kit_gups.c`):

    kit-gups source bea15ea432974e5d
    table_words 67108864
    table_bytes 536870912
    threads 2
    updates 268435456
    seconds 3.025016
    gups 0.088738539
    verify_seconds 3.048208
    errors 3
    error_fraction 0.000000045
    validation ok
    end

GUP/s of the whole system (all threads updating one table), and the fraction of table entries the
unlocked updates got wrong (the specification accepts up to 1%).
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import ranges
from kitlib.measure.parsers.kit_programs import fields, lines

TOOL = "kit-gups"
METHOD = "all threads on one table (kit-gups)"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    rows = lines(text, TOOL, source)
    if ["validation", "ok"] not in rows:
        raise ParseError(TOOL, source, "more than 1% of the table is wrong")
    found = fields(rows, TOOL, source, ("table_words", "updates", "seconds", "gups", "error_fraction"))
    if found["gups"] <= 0 or found["table_words"] <= 0:
        raise ParseError(TOOL, source, "gups and table_words must be positive")
    dims = {"benchmark": "RandomAccess", "variant": "System", "method": METHOD}
    return [
        Measurement("gups", found["gups"], "GUP/s", dims),
        Measurement("error_fraction", found["error_fraction"], "ratio", dict(dims)),
        Measurement("table_words", found["table_words"], "count", {"benchmark": "RandomAccess"}),
    ]
