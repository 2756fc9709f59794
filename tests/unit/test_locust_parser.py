"""The Locust parser on real captured runs of the web tier's users (tests/data/locust-history/capture.py:
20 users started 10 a second against a stand-in application, `--reset-stats --csv-full-history`):
counts that add up, the achieved mix against Table 1, ordered times, N/A read as missing, the steady
window after the ramp-up, and anything cut, foreign or garbled refused; random and edited input
either refused or read into values the input holds."""

from __future__ import annotations

import csv
import io
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kitlib.core.errors import ParseError
from kitlib.measure.parsers import locust
from kitlib.specs.webtier import TABLE1_MIX as TABLE1

from ..conftest import DATA

STATS_DIR, HISTORY_DIR = DATA / "locust", DATA / "locust-history"
MIX_RUN, IDLE_RUN = "standin-20users", "idleops-20users"  # Table 1 over ~2000 requests; idle operations
USERS = 20
#: deterministic and bounded, as the property test of every parser
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def stats_text(run: str) -> str:
    """The file as Locust wrote it, its CRLF line ends kept (the property test reads them translated)."""
    return (STATS_DIR / f"{run}_stats.csv").read_bytes().decode()


def history_text(run: str) -> str:
    return (HISTORY_DIR / f"{run}_stats_history.csv").read_bytes().decode()


def csv_rows(text: str) -> list[dict[str, str]]:
    """The file read by the csv module alone, to check the parser against."""
    return list(csv.DictReader(io.StringIO(text)))


def aggregated_seconds(run: str) -> list[tuple[int, int, int]]:
    """(second, users, running total) of each `Aggregated` row of the history."""
    return [
        (int(r["Timestamp"]), int(r["User Count"]), int(r["Total Request Count"]))
        for r in csv_rows(history_text(run))
        if r["Name"] == "Aggregated"
    ]


@pytest.fixture(scope="module")
def mix_run() -> list[locust.OperationStats]:
    return locust.parse_run(stats_text(MIX_RUN), history_text(MIX_RUN), MIX_RUN)


# -- the captured runs ----------------------------------------------------------------------------


@pytest.mark.parametrize("run", [MIX_RUN, IDLE_RUN])
def test_operations_add_up_to_the_aggregated_row(run):
    *operations, total = locust.parse_run(stats_text(run), history_text(run), run)
    assert total.operation == locust.AGGREGATED
    assert {op.operation for op in operations} == set(TABLE1)
    assert sum(op.requests for op in operations) == total.requests
    assert sum(op.failures for op in operations) == total.failures


def test_failures_are_the_404s_of_event_detail_and_match_the_failures_file(mix_run):
    failed = {op.operation: op.failures for op in mix_run if op.failures and op.operation != locust.AGGREGATED}
    assert set(failed) == {"EventDetail"}, failed
    rows = csv_rows((HISTORY_DIR / f"{MIX_RUN}_failures.csv").read_text())
    assert [(r["Name"], int(r["Occurrences"])) for r in rows] == [("EventDetail", failed["EventDetail"])]
    assert "status 404" in rows[0]["Error"]


def test_the_achieved_mix_is_table_1_within_four_standard_errors(mix_run):
    """With n requests an operation's share p has a standard error sqrt(p(1-p)/n): about 1 point for the
    frequent operations and 0.2 for the rare ones at n ~ 1950. The users' draws are seeded, so every
    capture finds nearly the same shares (only how many requests each user sent varies): HomePage
    about 28.7 % and TagSearch 30.1 %, 2.5 and 3.1 standard errors from Table 1, the others within 1.4
    (the generators' own draws for seed 1 fall there: the shortfall is the seed's, not the loop's)."""
    *operations, total = mix_run
    assert total.requests > 1500
    for op in operations:
        p = TABLE1[op.operation] / 100
        share = op.requests / total.requests
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / total.requests), (op.operation, share, p)


@pytest.mark.parametrize("run", [MIX_RUN, IDLE_RUN])
def test_times_are_present_ordered_and_as_printed(run):
    rows = {r["Name"]: r for r in csv_rows(stats_text(run))}
    for op in locust.parse_run(stats_text(run), history_text(run), run):
        if not op.requests:
            continue
        row = rows[op.operation]
        assert None not in (op.mean_ms, op.p50_ms, op.p90_ms, op.p99_ms, op.max_ms), op
        assert op.p50_ms <= op.p90_ms <= op.p99_ms <= op.max_ms, op
        assert (op.mean_ms, op.p90_ms, op.p99_ms, op.max_ms) == tuple(
            float(row[c]) for c in ("Average Response Time", "90%", "99%", "100%")
        )
        assert (op.requests, op.failures, op.rps) == (
            int(row["Request Count"]),
            int(row["Failure Count"]),
            float(row["Requests/s"]),
        )


def test_n_a_is_missing_not_zero():
    """The idle run's AddEvent and HomePage were drawn in the ramp-up only: after the reset Locust
    prints N/A for their percentiles and 0 for their mean; neither is a time."""
    rows = {r["Name"]: r for r in csv_rows(stats_text(IDLE_RUN))}
    idle = [op for op in locust.parse_run(stats_text(IDLE_RUN), history_text(IDLE_RUN), IDLE_RUN) if not op.requests]
    assert {op.operation for op in idle} == {"AddEvent", "HomePage"}
    for op in idle:
        assert rows[op.operation]["90%"] == "N/A" and rows[op.operation]["Average Response Time"] == "0.0"
        assert (op.mean_ms, op.p50_ms, op.p90_ms, op.p99_ms, op.max_ms) == (None,) * 5
    measured = {m.dims["operation"] for m in locust.parse(stats_text(IDLE_RUN), "s") if m.metric == "latency_p90"}
    assert measured.isdisjoint({op.operation for op in idle})


@pytest.mark.parametrize("run", [MIX_RUN, IDLE_RUN])
def test_the_steady_window_starts_after_the_ramp_up_and_holds_the_stats(run):
    seconds = aggregated_seconds(run)
    found = locust.parse_run(stats_text(run), history_text(run), run)
    start, end = found[0].window_start, found[0].window_end
    assert all((op.window_start, op.window_end) == (start, end) for op in found)
    ramp = [(t, u) for t, u, _ in seconds if 0 < u < USERS]
    assert ramp and all(t < start for t, _ in ramp), "the ramp-up (10 users) comes before the window"
    assert [t for t, u, _ in seconds if u == USERS] == list(range(start, end + 1))
    # the stats file is the history's last second: the window's requests, none of the ramp-up's
    assert seconds[-1][2] == found[-1].requests


def test_the_reset_shows_where_the_window_starts():
    """Running totals start again from zero at the reset: in the idle run three operations' totals fall
    from the ramp-up's last second to the window's first."""
    rows = csv_rows(history_text(IDLE_RUN))
    start = locust.steady_window(history_text(IDLE_RUN), IDLE_RUN).start
    before = max(int(r["Timestamp"]) for r in rows if int(r["Timestamp"]) < start)
    totals = {
        t: {r["Name"]: int(r["Total Request Count"]) for r in rows if int(r["Timestamp"]) == t} for t in (before, start)
    }
    fell = {name for name, n in totals[before].items() if totals[start].get(name, 0) < n}
    assert fell == {"AddEvent", "HomePage", "PersonDetail"}


@pytest.mark.parametrize("run", [MIX_RUN, IDLE_RUN])
def test_line_ends_as_written_or_translated_read_the_same(run):
    """Locust writes CRLF (Python's csv); a copy through a text pipe has LF."""
    crlf = locust.parse_run(stats_text(run), history_text(run), run)
    lf = locust.parse_run(stats_text(run).replace("\r\n", "\n"), history_text(run).replace("\r\n", "\n"), run)
    assert "\r\n" in stats_text(run) and crlf == lf


def test_intervals_are_the_running_totals_second_by_second(mix_run):
    window = locust.steady_window(history_text(MIX_RUN), MIX_RUN)
    found = locust.intervals(history_text(MIX_RUN), MIX_RUN)
    steady = [n for _, u, n in aggregated_seconds(MIX_RUN) if u == USERS]
    assert found == [float(b - a) for a, b in zip(steady, steady[1:], strict=False)]
    assert len(found) == window.end - window.start  # no second skipped in this capture
    assert sum(found) / len(found) == pytest.approx(mix_run[-1].rps, rel=0.05)


# -- refused input --------------------------------------------------------------------------------


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def with_cell(text: str, name: str, column: str, value: str) -> str:
    """`text` with one cell of the row named `name` replaced (stats rows hold no quoted commas)."""
    rows = lines(text)
    index = rows[0].rstrip("\r\n").split(",").index(column)
    for i, row in enumerate(rows):
        cells = row.split(",")
        if cells[1] == name:
            cells[index] = value + ("\r\n" if index == len(cells) - 1 else "")
            rows[i] = ",".join(cells)
    return "".join(rows)


def refused_stats() -> dict[str, str]:
    stats = stats_text(MIX_RUN)
    return {
        "empty": "",
        "blank": " \n\n",
        "header only": lines(stats)[0],
        "cut mid-line": stats[:-7],
        "cut before the Aggregated row": "".join(lines(stats)[:-1]),
        "a row dropped": "".join(lines(stats)[:2] + lines(stats)[3:]),
        "two runs": stats + "".join(lines(stats)[1:]),
        "a count garbled": with_cell(stats, "EventDetail", "Request Count", "4x2"),
        "a count that no longer adds up": with_cell(stats, "EventDetail", "Request Count", "473"),
        "NaN": with_cell(stats, "Aggregated", "Requests/s", "nan"),
        "percentiles out of order": with_cell(stats, "HomePage", "90%", "99"),
        "more failures than requests": with_cell(stats, "AddPerson", "Failure Count", "23"),
        "sysbench": (DATA / "sysbench" / "run-t2.txt").read_text(),
        "the history": history_text(MIX_RUN),
        "a failures file": (HISTORY_DIR / f"{MIX_RUN}_failures.csv").read_text(),
    }


@pytest.mark.parametrize("why", list(refused_stats()))
def test_stats_that_are_cut_foreign_or_garbled_are_refused(why):
    text = refused_stats()[why]
    with pytest.raises(ParseError, match=re.escape(f"cannot parse {MIX_RUN} (stats CSV)")):
        locust.parse_run(text, history_text(MIX_RUN), MIX_RUN)
    with pytest.raises(ParseError):
        locust.parse(text, why)


def refused_histories() -> dict[str, str]:
    history = history_text(MIX_RUN)
    full = [row.split(",")[0] for row in lines(history)[1:] if row.split(",")[1] == str(USERS)]
    middle = full[len(full) // 2]  # a second in the window
    return {
        "empty": "",
        "header only": lines(history)[0],
        "cut mid-line": history[:-5],
        "cut mid-second": "".join(lines(history)[:-1]),
        "a row dropped": "".join(lines(history)[:40] + lines(history)[41:]),
        "two runs": history + "".join(lines(history)[1:]),
        "the stats": stats_text(MIX_RUN),
        "sysbench": (DATA / "sysbench" / "run-t4-intervals.txt").read_text(),
        "no Aggregated rows": history.replace(",Aggregated,", ",Other,"),
        "the ramp-up only": "".join(lines(history)[:1] + [r for r in lines(history)[1:] if r.split(",")[1] != "20"]),
        "a user count that falls and rises": history.replace(f"{middle},20,", f"{middle},19,"),
    }


@pytest.mark.parametrize("why", list(refused_histories()))
def test_histories_that_are_cut_foreign_or_garbled_are_refused(why):
    text = refused_histories()[why]
    with pytest.raises(ParseError, match=re.escape(f"cannot parse {MIX_RUN} (history CSV)")):
        locust.parse_run(stats_text(MIX_RUN), text, MIX_RUN)
    with pytest.raises(ParseError):
        locust.intervals(text, why)


def test_the_stats_and_history_of_different_runs_or_a_history_cut_at_a_second_are_refused():
    """A history cut after a whole second reads as a shorter run on its own; with its stats file it no
    longer ends where the stats were written."""
    history = history_text(MIX_RUN)
    last_second = sum(1 for line in lines(history) if line.startswith(history.rsplit("\n", 2)[-2][:10]))
    cut = "".join(lines(history)[:-last_second])
    assert locust.steady_window(cut, "cut").end == locust.steady_window(history, "whole").end - 1
    for stats, text in (
        (stats_text(MIX_RUN), cut),
        (stats_text(IDLE_RUN), history),
        (stats_text(MIX_RUN), history_text(IDLE_RUN)),
    ):
        with pytest.raises(ParseError, match="not of one run"):
            locust.parse_run(stats, text, "pair")


# -- random and edited input: refused, or read into values it holds -------------------------------

_TOKEN = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def numbers_in(text: str) -> set[float]:
    return {float(t) for t in _TOKEN.findall(text)}


def held(stats: str, history: str) -> None:
    """parse_run, intervals: ParseError, or every value a number of the input (an interval: a difference
    of two counts of the history over at most the window's length in seconds)."""
    try:
        found = locust.parse_run(stats, history, "random")
    except ParseError:
        found = None
    if found is not None:
        in_stats, in_history = numbers_in(stats), numbers_in(history)
        for op in found:
            for value in (op.requests, op.failures, op.mean_ms, op.p50_ms, op.p90_ms, op.p99_ms, op.max_ms, op.rps):
                assert value is None or float(value) in in_stats, (op, value)
            assert {float(op.window_start), float(op.window_end)} <= in_history, op
    try:
        window = locust.steady_window(history, "random")
    except ParseError:
        return
    counts = {int(v) for v in numbers_in(history) if math.isfinite(v) and v == int(v)}
    assert {float(window.start), float(window.end), float(window.users)} <= numbers_in(history)
    for rate in window.intervals:
        assert math.isfinite(rate) and rate >= 0
        spans = range(1, window.end - window.start + 1)
        assert any(
            abs(rate * d - round(rate * d)) < 1e-9 * max(1.0, rate * d)
            and {c - round(rate * d) for c in counts} & counts
            for d in spans
        ), rate


@PROPERTY
@given(text=st.text(max_size=600))
def test_random_text_is_refused_or_held(text):
    held(text, history_text(MIX_RUN))
    held(stats_text(MIX_RUN), text)


CELLS = st.sampled_from(
    ["0", "1", "3", "20", "N/A", "2.5", "", "nan", "-1", "Aggregated", "GET", "HomePage", "1795732866"]
)


@st.composite
def locust_like(draw, header: str) -> str:
    """Locust's header and up to 12 rows of its cells, some a field short or long."""
    width = header.count(",") + 1
    rows = draw(st.lists(st.lists(CELLS, min_size=width - 1, max_size=width + 1), min_size=0, max_size=12))
    return header + "".join(",".join(row) + "\n" for row in rows)


@PROPERTY
@given(data=st.data())
def test_random_csv_with_locusts_headers_is_refused_or_held(data):
    stats = data.draw(locust_like(lines(stats_text(MIX_RUN))[0]))
    history = data.draw(locust_like(lines(history_text(MIX_RUN))[0]))
    held(stats, history_text(MIX_RUN))
    held(stats_text(MIX_RUN), history)
    held(stats, history)


@st.composite
def edited(draw, text: str) -> str:
    """`text` after one to three edits: a line dropped, doubled or swapped, or a character replaced."""
    for _ in range(draw(st.integers(1, 3))):
        rows = lines(text)
        at = draw(st.integers(0, len(rows) - 1))
        kind = draw(st.sampled_from(["drop", "double", "swap", "replace"]))
        if kind == "drop":
            del rows[at]
        elif kind == "double":
            rows.insert(at, rows[at])
        elif kind == "swap":
            other = draw(st.integers(0, len(rows) - 1))
            rows[at], rows[other] = rows[other], rows[at]
        else:
            spot = draw(st.integers(0, len(rows[at]) - 1))
            rows[at] = (
                rows[at][:spot] + draw(st.sampled_from(list("0179.,-\n") + ["N/A", "nan"])) + rows[at][spot + 1 :]
            )
        text = "".join(rows)
    return text


@PROPERTY
@given(data=st.data(), run=st.sampled_from([MIX_RUN, IDLE_RUN]))
def test_edited_real_files_are_refused_or_held(data, run):
    held(data.draw(edited(stats_text(run))), history_text(run))
    held(stats_text(run), data.draw(edited(history_text(run))))
