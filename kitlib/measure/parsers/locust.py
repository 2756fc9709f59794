"""Locust's CSV statistics (`--csv PREFIX`): `PREFIX_stats.csv`, one row per request name and the
`Aggregated` row last, and `PREFIX_stats_history.csv` (`--csv-full-history`), one row per name per
second and the `Aggregated` row last in each second, with the user count and running totals.

The web tier names every request by its operation, so a stats row is an operation's: its count,
failures, mean, the 50th/90th/99th percentiles and maximum (ms) and its rate (requests/s). The
`Aggregated` row is returned as an operation of that name, last. Locust prints `N/A` for the
percentiles of a name without requests, and 0 ms for its mean: both stay missing (None). Locust's
percentiles, the maximum among them (its `100%` column, so that p50 <= p90 <= p99 <= max holds), are
read from its response-time histogram (whole ms, two significant digits above 100 ms); the mean is
exact. Every value is reported as Locust printed it.

The steady window, from the history: with `--reset-stats` Locust empties its statistics when the
last user has been started (Locust 2.47: `spawning_complete` fires in the spawning greenlet right
after the last spawn, with no switch to the CSV writer in between), so the first second written at
the run's full user count is the first after the reset (the reset fell within the second before it),
and its running totals start from zero there: where the ramp-up's totals were higher they fall at
that row. The window ends at the last second at the full user count. Locust rewrites the stats file
in the same step as it appends a second to the history and does not write either at exit, so the
stats file's counts are the running totals of the history's last second: `parse_run` holds the two
files to that. The window's sub-intervals are the `Aggregated` running totals' increase between
consecutive seconds of it, divided by the seconds between them (Locust's writer sleeps 1 s after
each write, so a second is now and then skipped: such an interval spans two).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from dataclasses import dataclass

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import ranges
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
#: OperationStats' times and the stats columns they are read from (the maximum from the histogram too)
_TIMES = {"mean_ms": "Average Response Time", "p50_ms": "50%", "p90_ms": "90%", "p99_ms": "99%", "max_ms": "100%"}


@dataclass(frozen=True)
class OperationStats:
    """One request name's statistics over the window (times in ms; None where Locust printed N/A or
    timed nothing), and the window's first and last second (epoch) where the history was read."""

    operation: str
    requests: int
    failures: int
    mean_ms: float | None
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    rps: float
    window_start: int | None = None
    window_end: int | None = None


@dataclass(frozen=True)
class Window:
    """The steady window read from the history: its first and last second (epoch), the users, and the
    requests per second of each interval between its seconds."""

    start: int
    end: int
    users: int
    intervals: list[float]


@dataclass(frozen=True)
class _Second:
    """One write of the history: its second, the user count, and the running totals (requests,
    failures) of each name and of the aggregate."""

    at: int
    users: int
    names: dict[str, tuple[int, int]]
    total: tuple[int, int]


# -- the CSV itself -------------------------------------------------------------------------------


def _rows(text: str, source: str, header: tuple[str, ...]) -> list[dict[str, str]]:
    """The CSV's rows as dictionaries, every row whole: a header that is not Locust's, a row cut short
    or one with extra fields raises ParseError."""
    if not isinstance(text, str) or not text.strip():
        raise ParseError(TOOL, source, "empty output")
    if not text.endswith("\n"):
        raise ParseError(TOOL, source, "cut off: the last line has no end")
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(TOOL, source, f"not a CSV file ({exc})") from None
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


# -- the stats file -------------------------------------------------------------------------------


def _operation(row: dict[str, str], source: str) -> OperationStats:
    """One stats row; a name with no request since the reset prints 0 ms for times nobody measured,
    so none is read."""
    name = row["Name"]
    if not name:
        raise ParseError(TOOL, source, "a row without a request name")
    requests = count(row["Request Count"], TOOL, source, f"{name} requests")
    failures = count(row["Failure Count"], TOOL, source, f"{name} failures")
    if failures > requests:  # Locust counts a failed request as a request too
        raise ParseError(TOOL, source, f"{name}: {failures} failures of {requests} requests")
    timed = requests > 0
    times = {key: _time(row[column], source, f"{name} {column}") if timed else None for key, column in _TIMES.items()}
    ordered = [times[key] for key in ("p50_ms", "p90_ms", "p99_ms", "max_ms") if times[key] is not None]
    if ordered != sorted(ordered):
        raise ParseError(TOOL, source, f"{name}: percentiles out of order {ordered}")
    rps = number(row["Requests/s"], TOOL, source, f"{name} requests/s")
    return OperationStats(operation=name, requests=requests, failures=failures, rps=rps, **times)


def parse_stats(text: str, source: str) -> list[OperationStats]:
    """Every request name's statistics, the `Aggregated` row last (it must be there: Locust writes it
    last, so a file without it is cut off) and equal to the names' sums."""
    rows = _rows(text, source, STATS_COLUMNS)
    if not rows or rows[-1]["Name"] != AGGREGATED:
        raise ParseError(TOOL, source, f"no {AGGREGATED} row at the end: cut off or not a stats file")
    stats = [_operation(row, source) for row in rows]
    names = [s.operation for s in stats]
    if len(set(names)) != len(names):
        raise ParseError(TOOL, source, "a request name appears twice: two runs in one file")
    *operations, total = stats
    summed = (sum(s.requests for s in operations), sum(s.failures for s in operations))
    if summed != (total.requests, total.failures):
        raise ParseError(
            TOOL, source, f"the names add up to {summed}, {AGGREGATED} says {total.requests, total.failures}"
        )
    return stats


@ranges.checked(TOOL)
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


# -- the history ----------------------------------------------------------------------------------


def _totals(row: dict[str, str], source: str) -> tuple[int, int]:
    what = f"{row['Name'] or 'a row'} at {row['Timestamp']}"
    requests = count(row["Total Request Count"], TOOL, source, f"{what}: total requests")
    failures = count(row["Total Failure Count"], TOOL, source, f"{what}: total failures")
    if failures > requests:
        raise ParseError(TOOL, source, f"{what}: {failures} failures of {requests} requests")
    return requests, failures


def _second(rows: list[dict[str, str]], source: str) -> _Second:
    """One write: the names' rows, then the `Aggregated` row, all of one second and one user count, the
    names adding up to the aggregate (where the history has them, `--csv-full-history`)."""
    *named, last = rows
    at = count(last["Timestamp"], TOOL, source, "timestamp")
    if last["Name"] != AGGREGATED:
        raise ParseError(TOOL, source, f"the rows of {at} do not end with {AGGREGATED}: cut off or garbled")
    users = {row["User Count"] for row in rows}
    if len(users) != 1:
        raise ParseError(TOOL, source, f"the rows of {at} disagree on the user count: {sorted(users)}")
    names = {}
    for row in named:
        if not row["Name"] or row["Name"] == AGGREGATED or row["Name"] in names:
            raise ParseError(TOOL, source, f"a name missing or repeated at {at}: {row['Name']!r}")
        names[row["Name"]] = _totals(row, source)
    total = _totals(last, source)
    summed = (sum(r for r, _ in names.values()), sum(f for _, f in names.values()))
    if names and summed != total:
        raise ParseError(TOOL, source, f"the names at {at} add up to {summed}, {AGGREGATED} says {total}")
    return _Second(at, count(users.pop(), TOOL, source, f"user count at {at}"), names, total)


def _seconds(text: str, source: str) -> list[_Second]:
    """The history's writes in order; a second that comes back (two runs in one file) raises."""
    rows = _rows(text, source, HISTORY_COLUMNS)
    if not rows:
        raise ParseError(TOOL, source, "a header and no second: cut off")
    if not set(HISTORY_TOTALS) <= set(rows[0]):
        raise ParseError(TOOL, source, "no running totals: not a history of --csv-full-history")
    groups: list[list[dict[str, str]]] = []
    for row in rows:
        if groups and groups[-1][-1]["Name"] != AGGREGATED and row["Timestamp"] == groups[-1][-1]["Timestamp"]:
            groups[-1].append(row)
        else:
            groups.append([row])
    seconds = [_second(group, source) for group in groups]
    for before, after in zip(seconds, seconds[1:], strict=False):
        if after.at <= before.at:
            raise ParseError(TOOL, source, f"the history goes back from {before.at} to {after.at} (two runs?)")
    return seconds


def _window(seconds: list[_Second], source: str) -> Window:
    """The seconds at the run's full user count: one unbroken stretch of at least two, over which the
    running totals never fall."""
    users = max(s.users for s in seconds)
    at = [i for i, s in enumerate(seconds) if s.users == users]
    if users == 0 or len(at) < 2:
        raise ParseError(TOOL, source, f"{len(at)} second(s) at the full {users} users: no steady window")
    if at[-1] - at[0] + 1 != len(at):
        raise ParseError(TOOL, source, f"the user count fell below {users} and rose again: no single window")
    steady = seconds[at[0] : at[-1] + 1]
    intervals = []
    for before, after in zip(steady, steady[1:], strict=False):
        if after.total[0] < before.total[0]:
            raise ParseError(TOOL, source, f"the running total falls within the window at {after.at}")
        intervals.append((after.total[0] - before.total[0]) / (after.at - before.at))
    return Window(start=steady[0].at, end=steady[-1].at, users=users, intervals=intervals)


def steady_window(text: str, source: str) -> Window:
    """The steady window of a history file (see the module's description)."""
    return _window(_seconds(text, source), source)


def intervals(text: str, source: str) -> list[float]:
    """Requests per second in each interval between consecutive seconds of the steady window."""
    return steady_window(text, source).intervals


# -- both files of one run ------------------------------------------------------------------------


def _one_run(stats_csv_text: str, history_csv_text: str, source: str) -> tuple[list[OperationStats], Window]:
    """The stats and the steady window of one run's two files, the stats holding the history's last
    running totals; ParseError where they are not of one run."""
    stats_source, history_source = f"{source} (stats CSV)", f"{source} (history CSV)"
    stats = parse_stats(stats_csv_text, stats_source)
    seconds = _seconds(history_csv_text, history_source)
    window = _window(seconds, history_source)
    last = seconds[-1]
    held = {s.operation: (s.requests, s.failures) for s in stats}
    expected = {**last.names, AGGREGATED: last.total} if last.names else {AGGREGATED: last.total}
    found = held if last.names else {AGGREGATED: held[AGGREGATED]}
    if found != expected:
        raise ParseError(
            TOOL,
            source,
            f"the stats and the history's last second ({last.at}) are not of one run: {found} against {expected}",
        )
    return stats, window


def run_window(stats_csv_text: str, history_csv_text: str, source: str) -> Window:
    """The steady window of a run whose two files are checked to be of one run (as `parse_run`)."""
    return _one_run(stats_csv_text, history_csv_text, source)[1]


def parse_run(stats_csv_text: str, history_csv_text: str, source: str) -> list[OperationStats]:
    """Each operation's statistics over the steady window and the `Aggregated` row last, each carrying the
    window's first and last second. The stats file must hold the history's last running totals (the
    two files of one run, neither cut at a line end); `source` names the run in errors."""
    stats, window = _one_run(stats_csv_text, history_csv_text, source)
    return [dataclasses.replace(s, window_start=window.start, window_end=window.end) for s in stats]
