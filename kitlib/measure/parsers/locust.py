"""Locust's CSV statistics (`--csv PREFIX`): `PREFIX_stats.csv`, one row per request name and the
`Aggregated` row last, and `PREFIX_stats_history.csv` (`--csv-full-history`), one row per name per
second with the user count and running totals.

The web tier names every request by its operation, so a stats row is an operation's: its count,
failures, mean, the 50th/90th/99th percentiles and maximum (ms) and its rate (requests/s). Locust
prints `N/A` for a percentile of a name without requests, and 0 ms for the times of a name it kept
after the reset with no request since: both stay missing. Locust's
percentiles are read from its response-time histogram (rounded to two significant digits above 100 ms),
as Locust documents; they are reported as it printed them.

The history tells the steady window: Locust resets its statistics when every user has been started
(`--reset-stats`), so the rows at the full user count are those of the window, and the stats file's
counts are the window's. The window's sub-intervals are the `Aggregated` row's running totals
between consecutive seconds of it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers.numbers import count, number

TOOL = "locust"
AGGREGATED = "Aggregated"
STATS_COLUMNS = (
    *("Type", "Name", "Request Count", "Failure Count", "Median Response Time", "Average Response Time"),
    *("Min Response Time", "Max Response Time", "Average Content Size", "Requests/s", "Failures/s"),
    *("50%", "66%", "75%", "80%", "90%", "95%", "98%", "99%", "99.9%", "99.99%", "100%"),
)
HISTORY_COLUMNS = ("Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s")
HISTORY_TOTALS = ("Total Request Count", "Total Failure Count")


@dataclass(frozen=True)
class OperationStats:
    """One request name's statistics over the window (times in ms; None where Locust printed N/A)."""

    operation: str
    requests: int
    failures: int
    mean_ms: float | None
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    rps: float


@dataclass(frozen=True)
class Window:
    """The steady window read from the history: its first and last second (epoch), the users, and the
    requests per second of each second after the first."""

    start: int
    end: int
    users: int
    intervals: list[float]


def _rows(text: str, source: str, header: tuple[str, ...]) -> list[dict[str, str]]:
    """The CSV's rows as dictionaries, every row whole: a header that is not Locust's, a row cut short
    or one with extra fields raises ParseError."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError(TOOL, source, "empty output")
    if not text.endswith("\n"):
        raise ParseError(TOOL, source, "cut off: the last line has no end")
    rows = list(csv.reader(io.StringIO(text)))
    found = tuple(rows[0]) if rows else ()
    if found[: len(header)] != header:
        raise ParseError(TOOL, source, f"not Locust's CSV (header {', '.join(found[:4]) or 'missing'})")
    out = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(found):
            raise ParseError(TOOL, source, f"line {line} has {len(row)} fields, the header {len(found)}")
        out.append(dict(zip(found, row, strict=True)))
    return out


def _time(value: str, source: str, what: str) -> float | None:
    return None if value == "N/A" else number(value, TOOL, source, what)


def parse_stats(text: str, source: str) -> list[OperationStats]:
    """Every request name's statistics, the `Aggregated` row last (it must be there: Locust writes it
    last, so a file without it is cut off)."""
    rows = _rows(text, source, STATS_COLUMNS)
    if not rows or rows[-1]["Name"] != AGGREGATED:
        raise ParseError(TOOL, source, f"no {AGGREGATED} row at the end: cut off or not a stats file")
    stats = []
    for row in rows:
        name = row["Name"]
        if not name:
            raise ParseError(TOOL, source, "a row without a request name")
        requests = count(row["Request Count"], TOOL, source, f"{name} requests")
        # a name kept after the reset with no request since prints 0 ms: no time was measured, so none is read
        timed = requests > 0
        stats.append(
            OperationStats(
                operation=name,
                requests=requests,
                failures=count(row["Failure Count"], TOOL, source, f"{name} failures"),
                mean_ms=_time(row["Average Response Time"], source, f"{name} mean") if timed else None,
                p50_ms=_time(row["50%"], source, f"{name} p50") if timed else None,
                p90_ms=_time(row["90%"], source, f"{name} p90") if timed else None,
                p99_ms=_time(row["99%"], source, f"{name} p99") if timed else None,
                max_ms=_time(row["100%"], source, f"{name} max") if timed else None,
                rps=number(row["Requests/s"], TOOL, source, f"{name} requests/s"),
            )
        )
    names = [s.operation for s in stats]
    if len(set(names)) != len(names):
        raise ParseError(TOOL, source, "a request name appears twice: two runs in one file")
    return stats


def parse(text: str, source: str) -> list[Measurement]:
    """The stats file as measurements, per operation (`operation` dimension, `Aggregated` for all):
    mean, p90 and p99 latency (where printed), throughput, requests and errors."""
    out = []
    for op in parse_stats(text, source):
        dims = {"operation": op.operation}
        values = (
            ("latency_mean", op.mean_ms, "ms"),
            ("latency_p90", op.p90_ms, "ms"),
            ("latency_p99", op.p99_ms, "ms"),
            ("throughput", op.rps, "ops/s"),
            ("requests", float(op.requests), "requests"),
            ("errors", float(op.failures), "requests"),
        )
        out += [Measurement(metric, value, unit, dims) for metric, value, unit in values if value is not None]
    return out


def steady_window(text: str, source: str) -> Window:
    """The seconds of the history at the full user count (after the statistics were reset), from the
    `Aggregated` rows; fewer than two such seconds is no window."""
    rows = _rows(text, source, HISTORY_COLUMNS)
    header = set(rows[0]) if rows else set()
    if not set(HISTORY_TOTALS) <= header:
        raise ParseError(TOOL, source, "no running totals: not a history of --csv-full-history")
    aggregated = [
        (
            count(r["Timestamp"], TOOL, source, "timestamp"),
            count(r["User Count"], TOOL, source, "user count"),
            count(r["Total Request Count"], TOOL, source, "total requests"),
        )
        for r in rows
        if r["Name"] == AGGREGATED
    ]
    if not aggregated:
        raise ParseError(TOOL, source, f"no {AGGREGATED} rows")
    users = max(u for _, u, _ in aggregated)
    steady = [(t, total) for t, u, total in aggregated if u == users]
    if len(steady) < 2:
        raise ParseError(TOOL, source, f"{len(steady)} second(s) at the full {users} users: no steady window")
    intervals = []
    for (t0, n0), (t1, n1) in zip(steady, steady[1:], strict=False):
        if t1 <= t0 or n1 < n0:
            raise ParseError(TOOL, source, f"the history goes back at {t1} (two runs in one file?)")
        intervals.append((n1 - n0) / (t1 - t0))
    return Window(start=steady[0][0], end=steady[-1][0], users=users, intervals=intervals)


def intervals(text: str, source: str) -> list[float]:
    """Requests per second in each second of the steady window after its first."""
    return steady_window(text, source).intervals
