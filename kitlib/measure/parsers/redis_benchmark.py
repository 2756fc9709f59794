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
from collections.abc import Sequence

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers

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
_HEADER_LINE = ",".join(f'"{c}"' for c in CSV_HEADER)
_QUIET = re.compile(r"(?:^|\r)\s*([A-Za-z_]+)[^:\r\n]*: (\S+) requests per second, p50=(\S+) msec[ \t]*$", re.M)
_FAILURES = ("Could not connect", "Connection refused", "Error:")


def parse(text: str, source: str, ops: Sequence[str] | None = None) -> list[Measurement]:
    """Every test's figures; with `ops`, the output must hold exactly those tests in that order (a
    CSV has no closing line, so only the caller knows a row is missing)."""
    text = lines.finished(text)
    if _HEADER_LINE in text:
        found = _parse_csv(text, source)
    elif _QUIET.search(text):
        found = [m for op, rps, p50 in _QUIET.findall(text) for m in _quiet_measurements(op, rps, p50, source)]
    else:
        failure = next((line for line in text.splitlines() if any(f in line for f in _FAILURES)), None)
        raise ParseError(
            TOOL, source, f"the run failed: {failure.strip()}" if failure else "no CSV header and no summary line"
        )
    if ops is not None:
        seen = list(dict.fromkeys(m.dims["op"] for m in found))
        if seen != [op.upper() for op in ops]:
            raise ParseError(TOOL, source, f"tests {seen}, expected {[op.upper() for op in ops]} (output cut short?)")
    return found


def _parse_csv(text: str, source: str) -> list[Measurement]:
    if text.count(_HEADER_LINE) > 1:
        raise ParseError(TOOL, source, "two CSV headers: more than one run in one output")
    start = text.index(_HEADER_LINE)
    try:
        rows = list(csv.reader(io.StringIO(text[start:]), strict=True))
    except csv.Error as exc:
        raise ParseError(TOOL, source, f"CSV does not parse ({exc})") from None
    header, body = rows[0], [r for r in rows[1:] if r]
    if not body:
        raise ParseError(TOOL, source, "CSV header but no result row (truncated output?)")
    measurements = []
    for row in body:
        if len(row) != len(header):
            raise ParseError(TOOL, source, f"row has {len(row)} fields, header {len(header)}: {row}")
        fields = dict(zip(header, row, strict=True))
        words = fields["test"].split()
        if not words:
            raise ParseError(TOOL, source, f"a row names no test: {row}")
        op = words[0].upper()
        for column, (metric, unit, percentile) in _COLUMNS.items():
            value = numbers.number(fields[column], TOOL, source, f"{op} {column}")
            dims: dict[str, object] = {"op": op}
            if percentile is not None:
                dims["percentile"] = percentile
            measurements.append(Measurement(metric, value * 1000.0 if unit == "us" else value, unit, dims))
    return measurements


def _quiet_measurements(op: str, rps: str, p50: str, source: str) -> list[Measurement]:
    dims = {"op": op.upper()}
    return [
        Measurement("throughput", numbers.number(rps, TOOL, source, "rps"), "req/s", dims),
        Measurement(
            "latency_percentile",
            numbers.number(p50, TOOL, source, "p50") * 1000.0,
            "us",
            {**dims, "percentile": 50.0},
        ),
    ]
