"""Parsers never invent: numbers are read whole and strictly, an output cut inside its last number is
refused, and a value the tool did not print stays missing. The real outputs cut at the places that
once gave a wrong number, and the cases the property test cannot make (a key removed from fio's JSON,
a line removed from one instance of a bundle, a CSV cut at a row's end)."""

from __future__ import annotations

import json

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure import parsers
from kitlib.measure.parsers import numbers, redis_benchmark, scaleout_load, scaleout_oltp

from ..conftest import DATA


@pytest.mark.parametrize(
    "token", ["nan", "NaN", "inf", "-inf", "1e999", "1_000", " 7", "7 ", "", "1.2.3", "0x10", "-3"]
)
def test_a_number_is_a_whole_finite_decimal_of_an_allowed_sign(token):
    with pytest.raises(ParseError, match=r"tool: cannot parse file: latency .*"):
        numbers.number(token, "tool", "file", "latency")


def test_numbers_that_are_read():
    assert numbers.number("4.415", "t", "f", "max") == 4.415
    assert numbers.number("7.12e-07", "t", "f", "time") == 7.12e-07
    assert numbers.number("-3", "t", "f", "offset", negative=True) == -3.0
    assert numbers.count("112643", "t", "f", "ios") == 112643
    with pytest.raises(ParseError, match="not a count"):
        numbers.count("1.5", "t", "f", "ios")
    with pytest.raises(ParseError, match="not positive"):
        numbers.positive(0.0, "t", "f", "elapsed")
    with pytest.raises(ParseError, match="JSON holds NaN"):
        numbers.load_json('{"mean": NaN}', "fio", "f")
    with pytest.raises(ParseError, match="not a number"):
        numbers.checked(True, "fio", "f", "iops")


#: (tool, file, the text the file is cut after, the wrong value that cut once gave)
CUT_INSIDE_THE_LAST_NUMBER = [
    ("nuttcp", "nuttcp/nuttcp-t-parse.txt", "rate_Mbps=1", "throughput 0.001 Gbps for 19.035"),
    ("netperf", "netperf/netperf-udp-rr-classic.txt", "2.00     6", "6 transactions/s for 69148"),
    ("netperf", "netperf/netperf-tcp-rr-omni.txt", "16,19,2", "p99 2 us for 29"),
    ("xz", "xz/corpus16m-t2.txt", "kit-elapsed-seconds 3", "3.0 s for 3.721"),
    ("sockperf", "sockperf/sockperf-tcp-fullrtt.txt", "percentile 75.000 =   1", "17.4 us read as 1.0"),
    ("redis-benchmark", "redis-benchmark/get-c8-p10.csv", '"0.351","4', "max 4000 us for 4415"),
    ("kit-scaleout-load", "scaleout/scaleout-haproxy.txt", "== elapsed 0.1", "400k req/s for 303k"),
]


@pytest.mark.parametrize(("tool", "name", "until", "once"), CUT_INSIDE_THE_LAST_NUMBER)
def test_an_output_cut_inside_its_last_number_is_refused(tool, name, until, once, tmp_path):
    text = (DATA / name).read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index(until) + len(until)])
    with pytest.raises(ParseError, match=f"{tool}: cannot parse .*cut.txt"):
        parsers.parse_file(tool, cut)


def test_fio_without_completion_latencies_gives_no_latency_rather_than_zero():
    document = json.loads((DATA / "fio" / "fio-randread.json").read_text())
    del document["jobs"][0]["read"]["clat_ns"]
    found = {m.metric for m in parsers.get("fio")(json.dumps(document), "no-clat.json")}
    assert found == {"bandwidth", "iops"}


def test_a_scaleout_instance_without_its_queries_line_is_refused_not_counted_as_zero():
    text = (DATA / "scaleout_oltp" / "clients-native.txt").read_text()
    second = text.index("== instance 1")
    start = text.index("    queries:", second)
    cut = text[:start] + text[text.index("\n", start) + 1 :]
    with pytest.raises(ParseError, match=r"instance 1\): no 'queries:' line"):
        scaleout_oltp.parse(cut, "no-queries.txt")


def test_sysbench_refuses_the_scaleout_bundle_of_two_runs():
    with pytest.raises(ParseError, match="more than one run"):
        parsers.parse_file("sysbench", DATA / "scaleout_oltp" / "clients-native.txt")


def test_a_csv_without_the_rows_the_caller_asked_for_is_refused():
    """A CSV has no closing line: a run of GET and SET cut after its GET row looks finished, so the
    caller names the tests it ran (the redis experiment and the scale-out sections do)."""
    get = (DATA / "redis-benchmark" / "get-c8-p10.csv").read_text()
    assert {m.dims["op"] for m in redis_benchmark.parse(get, "get.csv", ops=("GET",))} == {"GET"}
    with pytest.raises(ParseError, match=r"tests \['GET'\], expected \['GET', 'SET'\]"):
        redis_benchmark.parse(get, "get.csv", ops=("GET", "SET"))
    bundle = (DATA / "scaleout" / "baseline.txt").read_text().replace("== loader 0 SET", "== loader 0 GET")
    with pytest.raises(ParseError, match=r"loader 0 GET\): tests \['SET'\], expected \['GET'\]"):
        scaleout_load.parse(bundle, "mislabelled.txt")
