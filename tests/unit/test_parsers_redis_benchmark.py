"""redis-benchmark parser on real outputs of redis-benchmark 7.0 (captured on loopback)."""

from __future__ import annotations

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure import parsers
from kitlib.measure.experiments.redis import mix_of_phases

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
