"""The parsers are strict by construction: every number pattern is of ASCII digits (one shared helper),
every line a parser reads is read whole or refused, a key or run given twice is refused, and each
value is held to its metric's physical range. Each case is a real captured output, damaged the way
that once gave a number the tool never printed."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from kitlib.core import ascii_numbers
from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure import parsers
from kitlib.measure.parsers import ranges

from ..conftest import DATA
from . import parser_oracle as oracle

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def _damaged(tmp_path: Path, name: str, old: str, new: str, count: int = 1) -> Path:
    """The real output `name` with `old` written as `new` (`count` times), saved beside the test."""
    text = (DATA / name).read_text()
    assert text.count(old) >= count, f"{name} no longer holds {old!r}"
    path = tmp_path / Path(name).name
    path.write_text(text.replace(old, new, count))
    return path


def _refused(tool: str, path: Path, message: str) -> str:
    with pytest.raises(ParseError, match=f"{re.escape(tool)}: cannot parse .*{path.name}: {message}") as error:
        parsers.parse_file(tool, path)
    return str(error.value)


# ---------------------------------------------------------------- ASCII digits only


def _modules() -> list[str]:
    root = Path(parsers.__file__).parent
    return [m.name for m in pkgutil.walk_packages([str(root)], prefix=f"{parsers.__name__}.")]


@pytest.mark.parametrize("module", _modules())
def test_every_parser_pattern_reads_ascii_digits_only(module):
    """Built through `numbers.pattern`, so `\\d`, `\\w` and `\\s` never take another script's digits."""
    loaded = importlib.import_module(module)
    patterns = [v for v in vars(loaded).values() if isinstance(v, re.Pattern)]
    patterns += [
        v for d in vars(loaded).values() if isinstance(d, dict) for v in d.values() if isinstance(v, re.Pattern)
    ]
    for pattern in patterns:
        assert pattern.flags & re.ASCII, f"{module}: {pattern.pattern!r} is not ASCII-only"
    source = Path(loaded.__file__).read_text()
    assert "re.compile(" not in source, f"{module} compiles a pattern without numbers.pattern"


@pytest.mark.parametrize("token", ["٢٦١٥٤", "２６", "१२", "1_000", "৩.৫"])
def test_the_shared_patterns_refuse_other_scripts_digits_and_underscores(token):
    assert not ascii_numbers.is_decimal(token) and not ascii_numbers.is_count(token)
    assert float(token) > 0  # what the patterns stand between: float() reads every one of them


#: (tool, real output, the number as printed, what the value read once was)
UNICODE_DIGITS = [
    ("sysbench", "sysbench/run-t2.txt", "(12652.02 per sec.)", "queries per sec. read as 12652.02"),
    ("sysbench", "sysbench/run-t2.txt", "(632.60 per sec.)", "tps read as 632.6"),
    ("redis-benchmark", "redis-benchmark/get-c8-p10.csv", '"251256.28"', "rps read as 251256.28"),
    ("redis-benchmark", "redis-benchmark/get-quiet.txt", "204081.64 requests", "rps read as 204081.64"),
    ("sockperf", "sockperf/sockperf-tcp-fullrtt.txt", "percentile 99.000 =   37.796", "p99 read as 37.796"),
    ("sockperf", "sockperf/sockperf-tcp-fullrtt.txt", "avg-rtt=16.990", "mean read as 16.99"),
    ("fio", "fio/fio-randread.json", '"99.000000" :', "percentile 99 read from its key"),
    ("nuttcp", "nuttcp/nuttcp-t-parse.txt", "tx_cpu=37", "cpu_tx read as 37"),
    ("netperf", "netperf/netperf-tcp-rr-omni.txt", "57607.79,", "rate read as 57607.79"),
    ("hpcc", "hpcc/hpccoutf-n8000-np2.txt", "CommWorldProcs=2", "processes read as 2"),
]


@pytest.mark.parametrize(("tool", "name", "printed", "once"), UNICODE_DIGITS)
def test_a_number_in_another_scripts_digits_is_refused(tool, name, printed, once, tmp_path):
    path = _damaged(tmp_path, name, printed, printed.translate(ARABIC_INDIC))
    with pytest.raises(ParseError, match=f"{re.escape(tool)}: cannot parse .*{path.name}"):
        parsers.parse_file(tool, path)


def test_the_issues_sysbench_example_names_the_number(tmp_path):
    path = _damaged(tmp_path, "sysbench/run-t2.txt", "(12652.02 per sec.)", "(٢٦١٥٤ per sec.)")
    _refused("sysbench", path, r"queries per sec\. is not a number: '٢٦١٥٤'")


# ---------------------------------------------------------------- hpcc

HPCC = "hpcc/hpccoutf-n8000-np2.txt"


def test_hpcc_a_summary_key_given_twice_is_refused_not_last_wins(tmp_path):
    """Two HPL_Tflops lines once gave the last: 999 GFLOPS."""
    path = _damaged(tmp_path, HPCC, "HPL_Tflops=0.0859122\n", "HPL_Tflops=0.0859122\nHPL_Tflops=0.999\n")
    _refused("hpcc", path, r"the summary gives HPL_Tflops twice \(0.0859122 and 0.999\)")


def test_hpcc_two_runs_in_one_file_are_refused(tmp_path):
    """hpcc appends each run to hpccoutf.txt: the first summary was read without a word."""
    text = (DATA / HPCC).read_text()
    path = tmp_path / "hpccoutf.txt"
    path.write_text(text + text)
    _refused("hpcc", path, r"2 'Begin of Summary section.' lines: more than one run in one file")


def test_hpcc_no_processes_is_refused_not_a_system_bandwidth_of_zero(tmp_path):
    path = _damaged(tmp_path, HPCC, "CommWorldProcs=2", "CommWorldProcs=0")
    _refused("hpcc", path, "CommWorldProcs 0.0 is not positive")


def test_hpcc_a_summary_without_success_is_refused(tmp_path):
    path = _damaged(tmp_path, HPCC, "Success=1\n", "")
    _refused("hpcc", path, "the summary lacks its Success= line")


def test_hpcc_the_real_file_still_reads_whole():
    found = parsers.parse_file("hpcc", DATA / HPCC)
    system = [m for m in found if m.dims.get("variant") == "System" and m.metric == "bandwidth"]
    assert len(system) == 4 and all(m.value > 0 for m in system)


# ---------------------------------------------------------------- records lost without refusal

SET_GET = "redis-benchmark/set-get-c4-p10.csv"


def test_redis_csv_cut_inside_its_last_row_is_refused_not_set_alone(tmp_path):
    text = (DATA / SET_GET).read_text()
    path = tmp_path / "cut.csv"
    path.write_text(text[: text.index('"GET","249999.98","0.0') + len('"GET","249999.98","0.0')])
    _refused("redis-benchmark", path, r"the output ends inside a line .*: the run was cut")
    ops = [m.dims["op"] for m in parsers.parse_file("redis-benchmark", DATA / SET_GET) if m.metric == "throughput"]
    assert ops == ["SET", "GET"]


def test_redis_a_row_given_twice_is_refused(tmp_path):
    row = '"SET","333333.34","0.079","0.032","0.071","0.119","0.319","0.695"\n'
    path = _damaged(tmp_path, SET_GET, row, row + row)
    _refused("redis-benchmark", path, r"test\(s\) SET reported twice")


SOCKPERF = "sockperf/sockperf-tcp-fullrtt.txt"


@pytest.mark.parametrize(
    ("printed", "message"),
    [
        (
            "---> percentile 99.000 =   37.796",
            r"a percentile line that does not read whole: '---> percentile 99.000 ='",
        ),
        ("---> percentile 50.000 =   15.422", r"a percentile line that does not read whole"),
    ],
)
def test_sockperf_a_percentile_line_without_its_number_is_refused(printed, message, tmp_path):
    path = _damaged(tmp_path, SOCKPERF, printed, printed[: printed.index("=") + 1] + "   ")
    _refused("sockperf", path, message)


def test_sockperf_a_percentile_line_lost_is_refused(tmp_path):
    path = _damaged(tmp_path, SOCKPERF, "sockperf: ---> percentile 90.000 =   20.049\n", "")
    _refused("sockperf", path, r"no percentile line for 90 \(a line lost\?\)")


@pytest.mark.parametrize("field", ["RunTime=1.550", "ReceivedMessages=91091", "SentMessages=91091"])
def test_sockperf_a_valid_duration_line_without_a_number_is_refused(field, tmp_path):
    line = "[Valid Duration] RunTime=1.550 sec; SentMessages=91091; ReceivedMessages=91091"
    path = _damaged(tmp_path, SOCKPERF, line, line.replace(field, field.split("=")[0] + "="))
    _refused("sockperf", path, r"a \[Valid Duration\] line that does not read whole")


def test_sockperf_an_output_without_its_valid_duration_line_is_refused(tmp_path):
    text = (DATA / SOCKPERF).read_text()
    line = next(row for row in text.splitlines(keepends=True) if "[Valid Duration]" in row)
    path = _damaged(tmp_path, SOCKPERF, line, "")
    _refused("sockperf", path, r"0 \[Valid Duration\] lines where sockperf prints one")


def test_fio_json_with_a_key_given_twice_is_refused(tmp_path):
    path = _damaged(
        tmp_path, "fio/fio-randread.json", '"99.000000" : 448512,', '"99.000000" : 448512, "99.000000" : 1,'
    )
    _refused("fio", path, r"JSON gives the key '99.000000' twice in one object")


def test_a_bundle_section_line_that_no_longer_reads_is_refused(tmp_path):
    path = _damaged(tmp_path, "scaleout/baseline.txt", "== loader 0 SET 5000", "== loader ٠ SET 5000")
    _refused("kit-scaleout-load", path, r"a line of no '== loader' section: '== loader ٠ SET 5000'")


def test_an_iops_log_line_given_twice_is_refused(tmp_path):
    text = (DATA / "fio-iops-log/randread.txt").read_text()
    line = text.splitlines(keepends=True)[5]
    path = _damaged(tmp_path, "fio-iops-log/randread.txt", line, line + line)
    _refused("fio-iops-log", path, r"line 7: time .* ms is not after")


# ---------------------------------------------------------------- physical ranges


@pytest.mark.parametrize(
    ("tool", "name", "printed", "written", "message"),
    [
        (
            "fio",
            "fio/fio-randread.json",
            '"99.000000" :',
            '"199.000000" :',
            "clat_percentile at percentile 199: a percentile is",
        ),
        ("nuttcp", "nuttcp/nuttcp-t-parse.txt", "tx_cpu=37", "tx_cpu=1000", r"cpu_tx 1000 % is not ≥ 0 and ≤ 100"),
        ("netperf", "netperf/netperf-tcp-rr-omni.txt", ",17.31,", ",0,", r"rtt_mean 0 us is not > 0"),
        ("sockperf", SOCKPERF, "avg-rtt=16.990", "avg-rtt=0.000", r"rtt_mean 0 us .*is not > 0"),
        (
            "kit-gups",
            "kit-gups/native-2threads-2p27-1update.txt",
            "error_fraction 0.000000007",
            "error_fraction 2",
            r"error_fraction 2 ratio .*is not ≥ 0 and ≤ 1 \(a fraction\)",
        ),
    ],
)
def test_a_value_outside_its_metrics_physical_range_is_refused_naming_it(
    tool, name, printed, written, message, tmp_path
):
    path = _damaged(tmp_path, name, printed, written)
    _refused(tool, path, message)


def test_a_percentile_of_199_is_refused_in_every_parser_that_reads_one():
    bad = Measurement("rtt_percentile", 20.0, "us", {"percentile": 199.0})
    with pytest.raises(ParseError, match="sockperf: cannot parse f: rtt_percentile at percentile 199"):
        ranges.check([bad], "sockperf", "f")


def test_every_registered_parser_holds_its_values_to_the_ranges():
    unchecked = [tool for tool in parsers.known_tools() if not getattr(parsers.get(tool), "ranges_checked", False)]
    assert not unchecked, f"parsers not wrapped in ranges.checked: {unchecked}"


def test_every_metric_the_real_outputs_give_lies_in_its_range():
    """The ranges are physical, not tight: every real output still reads."""
    for tool, paths in oracle.real_outputs().items():
        for path in paths:
            if not oracle.failed_run(path):
                assert parsers.get(tool)(path.read_text(), str(path)), path
