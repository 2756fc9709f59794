"""redis-benchmark (Redis 7) output: `--csv` rows, or the `-q` summary line.

    "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    "GET __rand_int__","251256.28","0.188","0.048","0.191","0.295","0.351","4.415"

    GET __rand_int__: 204081.64 requests per second, p50=0.071 msec

The test name is the command (`SET`, `GET`, or `SET __rand_int__ vvv…`); its first word becomes
the `op` dimension. Latencies are converted to µs.
"""

from __future__ import annotations

import csv
import io
import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "redis-benchmark"
CSV_HEADER = [
    "test",
    "rps",
    "avg_latency_ms",
    "min_latency_ms",
    "p50_latency_ms",
    "p95_latency_ms",
    "p99_latency_ms",
    "max_latency_ms",
]
#: csv column -> (metric, unit, percentile or None)
_COLUMNS = {
    "rps": ("throughput", "req/s", None),
    "avg_latency_ms": ("latency_mean", "us", None),
    "min_latency_ms": ("latency_min", "us", None),
    "p50_latency_ms": ("latency_percentile", "us", 50.0),
    "p95_latency_ms": ("latency_percentile", "us", 95.0),
    "p99_latency_ms": ("latency_percentile", "us", 99.0),
    "max_latency_ms": ("latency_max", "us", None),
}
_QUIET = re.compile(r"(?:^|\r)\s*([A-Za-z_]+)[^:\r\n]*: ([0-9.]+) requests per second, p50=([0-9.]+) msec\s*$", re.M)
_FAILURES = ("Could not connect", "Connection refused", "Error:")


def parse(text: str, source: str) -> list[Measurement]:
    if '"test","rps"' in text:
        return _parse_csv(text, source)
    found = _QUIET.findall(text)
    if found:
        return [m for op, rps, p50 in found for m in _quiet_measurements(op, rps, p50, source)]
    failure = next((line for line in text.splitlines() if any(f in line for f in _FAILURES)), None)
    raise ParseError(
        TOOL, source, f"the run failed: {failure.strip()}" if failure else "no CSV header and no summary line"
    )


def _parse_csv(text: str, source: str) -> list[Measurement]:
    start = text.index('"test","rps"')
    rows = list(csv.reader(io.StringIO(text[start:])))
    header, body = rows[0], [r for r in rows[1:] if r]
    missing = [c for c in CSV_HEADER if c not in header]
    if missing:
        raise ParseError(TOOL, source, f"CSV header lacks {missing}")
    if not body:
        raise ParseError(TOOL, source, "CSV header but no result row (truncated output?)")
    measurements = []
    for row in body:
        if len(row) != len(header):
            raise ParseError(TOOL, source, f"row has {len(row)} fields, header {len(header)}: {row}")
        fields = dict(zip(header, row, strict=True))
        op = fields["test"].split()[0].upper()
        for column, (metric, unit, percentile) in _COLUMNS.items():
            value = _number(fields[column], column, source)
            dims: dict[str, object] = {"op": op}
            if percentile is not None:
                dims["percentile"] = percentile
            measurements.append(Measurement(metric, value * 1000.0 if unit == "us" else value, unit, dims))
    return measurements


def _quiet_measurements(op: str, rps: str, p50: str, source: str) -> list[Measurement]:
    dims = {"op": op.upper()}
    return [
        Measurement("throughput", _number(rps, "rps", source), "req/s", dims),
        Measurement("latency_percentile", _number(p50, "p50", source) * 1000.0, "us", {**dims, "percentile": 50.0}),
    ]


def _number(text: str, what: str, source: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParseError(TOOL, source, f"{what} is not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ParseError(TOOL, source, f"{what} is not finite: {text!r}")
    return value
