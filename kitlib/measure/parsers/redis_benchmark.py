"""redis-benchmark (Redis 7) output: the full report, `--csv` rows, or the `-q` summary line.

    ====== GET __rand_int__ ======
    …
    Summary:
      throughput summary: 941028.88 requests per second
      latency summary (msec):
              avg       min       p50       p95       p99       max
            0.052     0.016     0.055     0.071     0.111     2.807

    "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    "GET __rand_int__","251256.28","0.188","0.048","0.191","0.295","0.351","4.415"

    GET __rand_int__: 204081.64 requests per second, p50=0.071 msec

The full report and `-q` also print, every 250 ms while a test runs, its rate over the last tick
(`GET __rand_int__: rps=861720.0 (overall: …) …`, each ended by a carriage return): `progress` reads
those as the test's sub-intervals. The first tick comes 1 ms after the start (its rate reads 0.0, its
overall rate inf or nan), so it is no sub-interval of the run and is left out; the requests after the last
tick are in the summary only.

redis-benchmark records a latency above 3 s as 3 s (its histogram's ceiling, printed as 3000.319 ms):
a maximum at that ceiling is no maximum, and the mean over a histogram holding such clamped requests
is too low by an unknown amount, so both are left out (missing), as is any percentile at the ceiling;
the throughput stays (it counts requests over the wall clock).

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
from kitlib.measure.parsers import lines, numbers, ranges

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
#: redis-benchmark's latency ceiling (CONFIG_LATENCY_HISTOGRAM_MAX_VALUE, 3,000,000 µs), in ms
CEILING_MS = 3000.0
_HEADER_LINE = ",".join(f'"{c}"' for c in CSV_HEADER)
_SECTION = numbers.pattern(r"(?:^|\r)====== ([^\r\n]+?) ======[ \t]*$", re.M)
_THROUGHPUT = numbers.pattern(r"^\s*throughput summary: (\S+) requests per second[ \t]*$", re.M)
_LATENCY_HEADER = ("avg", "min", "p50", "p95", "p99", "max")
_LATENCY = numbers.pattern(r"^\s*latency summary \(msec\):[ \t]*\n\s*(.+?)[ \t]*\n\s*(.+?)[ \t]*$", re.M)
#: summary column -> the csv column of the same figure
_SUMMARY_COLUMNS = dict(zip(_LATENCY_HEADER, CSV_HEADER[2:], strict=True))
_TICK = numbers.pattern(
    r"(?:^|\r)([^\r\n:]*): rps=(\S+) \(overall: [^)]*\) avg_msec=\S+ \(overall: [^)]*\)(?=[\r\n])", re.M
)
#: seconds between redis-benchmark's progress ticks (its SHOW_THROUGHPUT_INTERVAL)
TICK_SECONDS = 0.25
_QUIET = numbers.pattern(r"(?:^|\r)\s*([A-Za-z_]+)[^:\r\n]*: (\S+) requests per second, p50=(\S+) msec[ \t]*$", re.M)
_FAILURES = ("Could not connect", "Connection refused", "Error:")


@ranges.checked(TOOL)
def parse(text: str, source: str, ops: Sequence[str] | None = None) -> list[Measurement]:
    """Every test's figures; with `ops`, the output must hold exactly those tests in that order (a
    CSV has no closing line, so only the caller knows a row is missing)."""
    text = _complete(text, source)
    if _SECTION.search(text):
        found = _parse_report(text, source)
    elif _HEADER_LINE in text:
        found = _parse_csv(text, source)
    elif _QUIET.search(text):
        found = [m for op, rps, p50 in _QUIET.findall(text) for m in _quiet_measurements(op, rps, p50, source)]
    else:
        failure = _failure(text)
        raise ParseError(TOOL, source, f"the run failed: {failure}" if failure else "no CSV header and no summary line")
    tests = [m.dims["op"] for m in found if m.metric == "throughput"]
    twice = sorted({op for op in tests if tests.count(op) > 1})
    if twice:
        raise ParseError(TOOL, source, f"test(s) {', '.join(twice)} reported twice: a row or run given again")
    if ops is not None:
        seen = list(dict.fromkeys(m.dims["op"] for m in found))
        if seen != [op.upper() for op in ops]:
            raise ParseError(TOOL, source, f"tests {seen}, expected {[op.upper() for op in ops]} (output cut short?)")
    return found


def _complete(text: str, source: str) -> str:
    """The output, which must end at a line end: redis-benchmark ends each result with one, so text after
    the last (a CSV row without its end, a test's progress ticks) is a run cut while printing; what
    lines.finished would leave (the rows before) would read as a run of fewer tests."""
    done = lines.finished(text)
    rest = text[len(done) :].strip()
    if rest:
        failure = _failure(text)
        cut = f"the output ends inside a line ({rest[-60:]!r}): the run was cut"
        raise ParseError(TOOL, source, f"the run failed: {failure}" if failure else cut)
    return done


def _failure(text: str) -> str | None:
    """The line in which redis-benchmark says it could not run, if any."""
    return next((line.strip() for line in text.splitlines() if any(f in line for f in _FAILURES)), None)


def _parse_report(text: str, source: str) -> list[Measurement]:
    """Each `====== test ======` section's summary; a section without one was cut off."""
    if _HEADER_LINE in text:
        raise ParseError(TOOL, source, "a report and CSV rows in one output")
    heads = list(_SECTION.finditer(text))
    measurements = []
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end() : following.start() if following else len(text)]
        words = head.group(1).split()
        if not words:
            raise ParseError(TOOL, source, f"a section names no test: {head.group(0)!r}")
        op = words[0].upper()
        rps = _THROUGHPUT.search(body)
        latency = _LATENCY.search(body)
        if rps is None or latency is None:
            raise ParseError(TOOL, source, f"{op}: no {'throughput' if rps is None else 'latency'} summary (cut off?)")
        header, values = latency.group(1).split(), latency.group(2).split()
        if tuple(header) != _LATENCY_HEADER or len(values) != len(header):
            raise ParseError(TOOL, source, f"{op}: latency summary {header} {values}, expected {list(_LATENCY_HEADER)}")
        fields = {"rps": rps.group(1), **{_SUMMARY_COLUMNS[h]: v for h, v in zip(header, values, strict=True)}}
        measurements += _measurements(op, fields, source)
    return measurements


def progress(text: str, source: str) -> dict[str, list[float]]:
    """Each test's rate per progress tick (requests/s over about TICK_SECONDS), by its op, the first
    tick left out; a test whose report holds no tick (a run shorter than a tick) maps to []."""
    ticks: dict[str, list[float]] = {}
    for title, rate in _TICK.findall(text):
        words = title.split()
        if not words:
            raise ParseError(TOOL, source, f"a progress line names no test: {title!r}")
        ticks.setdefault(words[0].upper(), []).append(numbers.number(rate, TOOL, source, "progress rps"))
    return {op: rates[1:] for op, rates in ticks.items()}


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
        measurements += _measurements(words[0].upper(), fields, source)
    return measurements


def _measurements(op: str, fields: dict[str, str], source: str) -> list[Measurement]:
    """One test's figures from its fields, named as the CSV names them."""
    found = []
    values = {column: numbers.number(fields[column], TOOL, source, f"{op} {column}") for column in _COLUMNS}
    clamped = values["max_latency_ms"] >= CEILING_MS
    for column, (metric, unit, percentile) in _COLUMNS.items():
        value = values[column]
        if unit == "us" and (value >= CEILING_MS or (clamped and metric == "latency_mean")):
            continue  # at the ceiling, or a mean over clamped requests: not a measurement
        dims: dict[str, object] = {"op": op}
        if percentile is not None:
            dims["percentile"] = percentile
        found.append(Measurement(metric, value * 1000.0 if unit == "us" else value, unit, dims))
    return found


def _quiet_measurements(op: str, rps: str, p50: str, source: str) -> list[Measurement]:
    dims = {"op": op.upper()}
    median = numbers.number(p50, TOOL, source, "p50")
    found = [Measurement("throughput", numbers.number(rps, TOOL, source, "rps"), "req/s", dims)]
    if median < CEILING_MS:
        found.append(Measurement("latency_percentile", median * 1000.0, "us", {**dims, "percentile": 50.0}))
    return found
