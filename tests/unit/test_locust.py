"""Locust's statistics as the web tier reads them, on real outputs of the kit's own runs (the native
web tier at 5 and 15 users): per-operation values that stand in the file, counts that add up to the
aggregate, times missing where no request was timed, the steady window read from the history, and
cut or foreign input refused. (tests/unit/test_parsers_property.py holds the stats parser to the
property rules of every parser.)"""

from __future__ import annotations

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure.parsers import locust

from ..conftest import DATA

STATS = sorted((DATA / "locust").glob("*_stats.csv"))
HISTORY = sorted((DATA / "locust-history").glob("*_stats_history.csv"))


@pytest.mark.parametrize("path", STATS, ids=lambda p: p.name)
def test_operations_add_up_to_the_aggregate_and_percentiles_are_ordered(path):
    stats = locust.parse_stats(path.read_text(), path.name)
    *operations, aggregated = stats
    assert aggregated.operation == locust.AGGREGATED
    assert sum(op.requests for op in operations) == aggregated.requests
    assert sum(op.failures for op in operations) == aggregated.failures
    assert {op.operation for op in operations} == {
        "HomePage",
        "Login",
        "TagSearch",
        "EventDetail",
        "PersonDetail",
        "AddPerson",
        "AddEvent",
    }
    for op in stats:
        if op.requests:
            assert op.p50_ms <= op.p90_ms <= op.p99_ms <= op.max_ms, op
        else:  # Locust prints 0 ms for a name with no request since the reset: no time was measured
            assert op.mean_ms is None and op.p90_ms is None and op.max_ms is None, op


def test_an_operation_without_requests_has_no_latency_records():
    text = (DATA / "locust" / "native-5users_stats.csv").read_text()
    idle = [op.operation for op in locust.parse_stats(text, "s") if op.requests == 0]
    assert idle, "the 5-user point has an operation that drew no request (AddEvent at 2%)"
    found = locust.parse(text, "s")
    for name in idle:
        metrics = {m.metric for m in found if m.dims["operation"] == name}
        assert metrics == {"throughput", "requests", "errors"}, (name, metrics)


@pytest.mark.parametrize("path", HISTORY, ids=lambda p: p.name)
def test_the_steady_window_is_the_seconds_at_the_full_user_count(path):
    text = path.read_text()
    window = locust.steady_window(text, path.name)
    users = int(path.name.split("-")[1].removesuffix("users_stats_history.csv"))
    assert window.users == users
    assert window.end > window.start and len(window.intervals) == window.end - window.start
    assert all(rate >= 0 for rate in window.intervals)
    # the window's last running total is the stats file's aggregate count: the same requests
    stats = (DATA / "locust" / path.name.replace("_stats_history", "_stats")).read_text()
    last = [line for line in text.splitlines() if ",Aggregated," in line][-1].split(",")
    assert int(last[17]) == locust.parse_stats(stats, "s")[-1].requests


def test_cut_foreign_and_garbled_input_is_refused():
    stats = (DATA / "locust" / "native-15users_stats.csv").read_text()
    history = HISTORY[0].read_text()
    cut_before_aggregate = "".join(stats.splitlines(keepends=True)[:-1])
    for text, why in (
        ("", "empty"),
        (stats[:-5], "cut mid-line"),
        (cut_before_aggregate, "no Aggregated row"),
        (stats.splitlines(keepends=True)[0], "a header only"),
        (stats + stats.splitlines(keepends=True)[-1], "two runs in one file"),
        (history, "the history is not the stats"),
        ((DATA / "sysbench").glob("*").__next__().read_text(), "another tool's output"),
    ):
        with pytest.raises(ParseError):
            locust.parse(text, why)
    header = history.splitlines(keepends=True)[0]
    for text in ("", header, stats, history.replace(",Aggregated,", ",Other,")):
        with pytest.raises(ParseError):
            locust.steady_window(text, "history")


def test_the_window_of_a_run_is_read_once_its_two_files_are_held_to_one_run():
    """`run_window`, what a point reads: the history's steady window, and the stats of another run refused."""
    five, fifteen = (DATA / "locust" / f"native-{n}users_stats.csv" for n in (5, 15))
    history = (DATA / "locust-history" / "native-5users_stats_history.csv").read_text()
    window = locust.run_window(five.read_text(), history, "5 users")
    assert window == locust.steady_window(history, "5 users")
    with pytest.raises(ParseError, match="not of one run"):
        locust.run_window(fifteen.read_text(), history, "mixed")
