"""Shared by the parsers of the kit's own programs: a header of key=value fields, then one latency
per line between `<tool> latencies_us` and `<tool> end`, summarised the same way everywhere."""

from __future__ import annotations

import re

import numpy as np

from kitlib.errors import ParseError
from kitlib.records import Measurement

CDF_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.9)
_FIELDS = re.compile(r"(\w+)=([0-9.]+)")


def read(text: str, tool: str, source: str, count_field: str) -> tuple[dict[str, float], np.ndarray]:
    """Header fields and the latency samples; the sample count must match the header's count."""
    lines = text.splitlines()
    try:
        start, end = lines.index(f"{tool} latencies_us"), lines.index(f"{tool} end")
    except ValueError:
        raise ParseError(tool, source, f"no latency block (truncated output, or not {tool} output)") from None
    prefix = f"{tool} "
    fields = {k: float(v) for line in lines[:start] if line.startswith(prefix) for k, v in _FIELDS.findall(line)}
    if count_field not in fields:
        raise ParseError(tool, source, f"header lacks {count_field}")
    try:
        samples = np.array([float(v) for v in lines[start + 1 : end]])
    except ValueError as exc:
        raise ParseError(tool, source, f"a latency is not a number: {exc}") from None
    if len(samples) == 0 or len(samples) != int(fields[count_field]):
        raise ParseError(tool, source, f"{len(samples)} latencies for {int(fields[count_field])} {count_field}")
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
