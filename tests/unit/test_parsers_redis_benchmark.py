"""redis-benchmark parser on real outputs of redis-benchmark 7.0 (captured on loopback)."""

from __future__ import annotations

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure import parsers
from kitlib.measure.experiments.redis import mix_of_phases
from kitlib.measure.parsers import redis_benchmark

from ..conftest import DATA

FILES = DATA / "redis-benchmark"


def by_key(measurements):
    return {(m.metric, m.dims.get("op"), m.dims.get("percentile")): m for m in measurements}


def test_csv_set_run():
    found = by_key(parsers.parse_file("redis-benchmark", FILES / "set-c8-p10.csv"))
    assert found[("throughput", "SET", None)].value == pytest.approx(205761.31)
    assert found[("throughput", "SET", None)].unit == "req/s"
    assert found[("latency_mean", "SET", None)].value == pytest.approx(289.0)
    assert found[("latency_mean", "SET", None)].unit == "us"
    assert found[("latency_percentile", "SET", 99.0)].value == pytest.approx(783.0)
    assert found[("latency_max", "SET", None)].value == pytest.approx(7823.0)
    assert len(found) == 7


def test_quiet_summary_line():
    found = by_key(parsers.parse_file("redis-benchmark", FILES / "get-quiet.txt"))
    assert found[("throughput", "GET", None)].value == pytest.approx(204081.64)
    assert found[("latency_percentile", "GET", 50.0)].value == pytest.approx(71.0)


def test_mix_combines_equal_phases():
    set_run = parsers.parse_file("redis-benchmark", FILES / "set-c8-p10.csv")
    get_run = parsers.parse_file("redis-benchmark", FILES / "get-c8-p10.csv")
    mix = by_key(mix_of_phases(set_run + get_run))
    # equal request counts: total rate is the harmonic mean of the two phase rates
    assert mix[("throughput", "mix", None)].value == pytest.approx(2 / (1 / 205761.31 + 1 / 251256.28))
    assert mix[("latency_mean", "mix", None)].value == pytest.approx((289.0 + 188.0) / 2)
    assert mix_of_phases(set_run) == []


def test_refused_connection_names_the_failure():
    with pytest.raises(ParseError, match="redis-benchmark.*refused.txt.*Connection refused"):
        parsers.parse_file("redis-benchmark", FILES / "refused.txt")


def test_truncated_output_raises(tmp_path):
    text = (FILES / "set-c8-p10.csv").read_text()
    cut = tmp_path / "cut.csv"
    cut.write_text(text[: text.index("\n") + 20])
    with pytest.raises(ParseError, match="redis-benchmark"):
        parsers.parse_file("redis-benchmark", cut)
    header_only = tmp_path / "header.csv"
    header_only.write_text(text.splitlines()[0] + "\n")
    with pytest.raises(ParseError, match="no result row"):
        parsers.parse_file("redis-benchmark", header_only)


def test_garbage_raises(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_bytes(b"\x00\x01 hello world\nrps=lots\n")
    with pytest.raises(ParseError, match="redis-benchmark.*junk.txt"):
        parsers.parse_file("redis-benchmark", junk)


def test_unknown_tool_lists_known_ones():
    from kitlib.core.errors import KitError

    with pytest.raises(KitError, match="known tools: .*redis-benchmark"):
        parsers.get("no-such-tool")


def test_the_full_report_gives_the_csv_s_figures_from_its_summary():
    found = by_key(parsers.parse_file("redis-benchmark", FILES / "set-c8-p10-report.txt"))
    assert found[("throughput", "SET", None)].value == pytest.approx(667779.69)
    assert found[("latency_mean", "SET", None)].value == pytest.approx(104.0)
    assert found[("latency_min", "SET", None)].value == pytest.approx(24.0)
    assert found[("latency_percentile", "SET", 95.0)].value == pytest.approx(199.0)
    assert found[("latency_max", "SET", None)].value == pytest.approx(1983.0)
    assert len(found) == 7


def test_progress_ticks_are_the_sub_intervals_without_the_first_millisecond_one():
    text = (FILES / "get-c1-p10-report.txt").read_bytes().decode()  # as the tool printed it, with \r
    ticks = redis_benchmark.progress(text, "get.txt")
    assert ticks == {"GET": [139282.9, 138160.0, 139120.0, 134640.0, 131920.0, 137808.8, 139640.0]}
    # read back from a file, where Python turns each \r into \n, the same ticks
    assert redis_benchmark.progress((FILES / "get-c1-p10-report.txt").read_text(), "get.txt") == ticks
    # a run over before its second tick has no sub-interval, not an invented one
    assert redis_benchmark.progress((FILES / "get-c8-p10-report-one-tick.txt").read_text(), "x") == {"GET": []}


def test_a_report_cut_before_its_summary_or_beside_csv_rows_is_refused(tmp_path):
    text = (FILES / "set-c8-p10-report.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("latency summary")])
    with pytest.raises(ParseError, match="no latency summary"):
        parsers.parse_file("redis-benchmark", cut)
    both = tmp_path / "both.txt"
    both.write_text(text + (FILES / "get-c8-p10.csv").read_text())
    with pytest.raises(ParseError, match="a report and CSV rows"):
        parsers.parse_file("redis-benchmark", both)


def test_latencies_at_the_tool_s_3_s_ceiling_are_missing_not_3_s():
    """redis-benchmark records every latency above 3 s as 3 s (printed 3000.319 ms). In this real SET
    phase through slirp4netns, stalled for most of 28 s, the maximum sits on that ceiling and the mean
    (1.270 ms) counts each stalled request as 3 s at most: neither is a measurement, so both are missing;
    the throughput (requests over the wall clock) and the percentiles under the ceiling stay."""
    found = by_key(parsers.parse_file("redis-benchmark", FILES / "set-c48-p10-slirp4netns-stall.txt"))
    assert found[("throughput", "SET", None)].value == pytest.approx(23160.39)
    assert ("latency_max", "SET", None) not in found and ("latency_mean", "SET", None) not in found
    assert found[("latency_percentile", "SET", 99.0)].value < redis_benchmark.CEILING_MS * 1000
    mix = by_key(mix_of_phases(list(found.values()) + parsers.parse_file("redis-benchmark", FILES / "get-c8-p10.csv")))
    assert ("throughput", "mix", None) in mix and ("latency_mean", "mix", None) not in mix
