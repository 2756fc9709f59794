"""Shared by the parsers of the kit's own programs: a header of key=value fields, then one latency
per line between `<tool> latencies_us` and `<tool> end`, summarised the same way everywhere."""

from __future__ import annotations

import numpy as np

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers

CDF_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.9)
_FIELDS = numbers.pattern(r"(\w+)=(\S*)")


def read(text: str, tool: str, source: str, count_field: str, *numeric: str) -> tuple[dict[str, float], np.ndarray]:
    """The header's `count_field` and `numeric` fields as numbers (other fields, `op=copyup`, are
    words) and the latency samples, from exactly one block that reached its end line; the sample
    count must match the header's count."""
    lines = text.splitlines()
    begin, end = f"{tool} latencies_us", f"{tool} end"
    if lines.count(begin) != 1 or lines.count(end) != 1 or lines.index(end) < lines.index(begin):
        raise ParseError(tool, source, f"no single latency block (truncated output, or not {tool} output)")
    start, stop = lines.index(begin), lines.index(end)
    prefix = f"{tool} "
    header: dict[str, str] = {}
    for line in lines[:start]:
        for key, value in _FIELDS.findall(line) if line.startswith(prefix) else ():
            if key in header:
                raise ParseError(tool, source, f"header names {key} twice")
            header[key] = value
    fields = {}
    for key in (count_field, *numeric):
        if key not in header:
            raise ParseError(tool, source, f"header lacks {key}")
        fields[key] = numbers.number(header[key], tool, source, f"header field {key}")
    samples = np.array([numbers.number(v, tool, source, "a latency") for v in lines[start + 1 : stop]])
    if len(samples) == 0 or len(samples) != fields[count_field]:
        raise ParseError(tool, source, f"{len(samples)} latencies for {fields[count_field]:g} {count_field}")
    return fields, samples


def summary(samples: np.ndarray, *, percentiles: bool = True) -> list[Measurement]:
    """Mean, median, p99 and (optionally) the percentiles a CDF is drawn from, all in µs."""
    found = [
        Measurement("latency_mean", float(samples.mean()), "us"),
        Measurement("latency_median", float(np.median(samples)), "us"),
        Measurement("latency_p99", float(np.percentile(samples, 99)), "us"),
    ]
    if percentiles:
        found += [
            Measurement("latency_percentile", float(np.percentile(samples, p)), "us", {"percentile": float(p)})
            for p in CDF_PERCENTILES
        ]
    return found
