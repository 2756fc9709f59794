"""Steady state of a time-bound point: the sub-intervals its real tools report, the warm-up MSER finds,
the half-width of the point's mean, and how much longer a point must run to meet the rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kitlib.core import steady
from kitlib.core.errors import ParseError
from kitlib.measure.parsers import fio_iops_log, nuttcp, redis_benchmark, scaleout_oltp, sysbench

from ..conftest import DATA


def test_sysbench_report_lines_are_the_sub_intervals():
    text = (DATA / "sysbench" / "run-t4-intervals.txt").read_text()
    values, every = sysbench.intervals(text, "t4")
    assert every == 1.0
    assert values == [1594.94, 1372.26, 1560.88, 1484.05, 1527.07, 1517.93]
    whole = next(m.value for m in sysbench.parse(text, "t4") if m.metric == "tps")
    assert whole == pytest.approx(np.mean(values), rel=0.01), "the lines make up the run sysbench sums up"


def test_sysbench_without_report_lines_or_with_a_gap_is_refused():
    text = (DATA / "sysbench" / "run-t2.txt").read_text()
    with pytest.raises(ParseError, match="Report intermediate results every"):
        sysbench.intervals(text, "no reports")
    gapped = (DATA / "sysbench" / "run-t4-intervals.txt").read_text().replace("[ 3s ]", "[ 4s ]", 1)
    with pytest.raises(ParseError, match="report line 3 is at 4s"):
        sysbench.intervals(gapped, "gap")


def test_nuttcp_interval_lines_and_the_summary_they_end_in():
    text = (DATA / "nuttcp" / "nuttcp-r-parse-intervals.txt").read_text()
    values, every = nuttcp.intervals(text, "r")
    assert every == 0.5 and len(values) == 5 and values[0] == pytest.approx(15.4009004)
    assert next(m.value for m in nuttcp.parse(text, "r") if m.metric == "throughput") == pytest.approx(13.3349952)
    cut = text[: text.index("megabytes=4768")]  # the run ended before its summary
    with pytest.raises(ParseError):
        nuttcp.intervals(cut, "cut")
    with pytest.raises(ParseError):
        nuttcp.parse(cut, "cut")


def test_nuttcp_intervals_a_hundredth_apart_are_one_length_and_a_stray_one_is_refused():
    text = (DATA / "nuttcp" / "nuttcp-t-parse-intervals-jitter.txt").read_text()  # one real_sec=0.49 among 0.50
    values, every = nuttcp.intervals(text, "jitter")
    assert every == 0.5 and len(values) == 24 and values[6] == pytest.approx(7.0967298)
    with pytest.raises(ParseError, match="different lengths"):
        nuttcp.intervals(text.replace("real_sec=0.49", "real_sec=0.20", 1), "stray")
    late = text.replace("real_sec=0.49", "real_sec=0.57", 1).replace("real_sec=0.50", "real_sec=0.43", 1)
    assert nuttcp.intervals(late, "late")[1] == 0.5  # a timer fired late: one longer, the next shorter


def test_fio_iops_logs_add_jobs_and_directions_per_window():
    text = (DATA / "fio-iops-log" / "randrw-2jobs.txt").read_text()
    values, every = fio_iops_log.intervals(text, "mix")
    assert every == 0.25
    assert values[0] == 46180 + 19864 + 45772 + 19928, "two jobs, reads and writes, of the first window"
    assert len(values) == 7
    single, _ = fio_iops_log.intervals((DATA / "fio-iops-log" / "randread.txt").read_text(), "read")
    assert len(single) == 11


def test_a_cut_or_short_fio_log_is_refused():
    text = (DATA / "fio-iops-log" / "randread.txt").read_text()
    with pytest.raises(ParseError, match="closing '== end'"):
        fio_iops_log.intervals(text[: text.index("== end")], "cut")
    short = text.replace("runtime_s=3", "runtime_s=30")
    with pytest.raises(ParseError, match="covers 11 windows up to 11 of a 30 s run"):
        fio_iops_log.intervals(short, "short")


def test_a_stall_inside_an_fio_log_is_left_out_not_filled_in():
    """An emulated guest's random writes: every job's window at 5.3 s is missing (the guest stalled), the
    run's end is there; the stalled window is no interval, and no value stands in for it."""
    text = (DATA / "fio-iops-log" / "randwrite-8jobs-emulated-gap.txt").read_text()
    values, every = fio_iops_log.intervals(text, "tcg")
    assert every == 0.25 and len(values) == 22
    lines = [line for line in text.splitlines() if line[:1].isdigit()]
    assert sum(values) == pytest.approx(sum(float(line.split(",")[1]) for line in lines))
    gapped = "\n".join(line for line in text.splitlines() if not line.startswith(("2", "3"))) + "\n"
    with pytest.raises(ParseError, match="covers"):  # a third of the windows gone: broken, not a stall
        fio_iops_log.intervals(gapped, "gapped")


def test_the_oltp_scaleout_adds_its_clients_per_interval():
    one = (DATA / "sysbench" / "run-t4-intervals.txt").read_text()
    bundle = f"== instance 0\n{one}== instance 1\n{one}== elapsed 6.1\n"
    values, every = scaleout_oltp.intervals(bundle, "two")
    assert every == 1.0 and values[0] == pytest.approx(2 * 1594.94)


def test_mser_finds_a_warm_up_and_leaves_a_steady_series_whole():
    rng = np.random.default_rng(7)
    flat = 1000 + rng.normal(0, 10, 60)
    warm = flat.copy()
    warm[:10] -= np.linspace(400, 40, 10)  # a server filling its caches
    dropped = steady.mser_truncation(warm)
    assert 10 <= dropped <= 30, "MSER-5 drops the warm-up's batches, never more than half the series"
    found = steady.assess(warm, 0.25)
    assert found.method == "MSER-5" and found.bias_pct < -1
    assert steady.reasons(steady.DEFAULT_RULE, found), "a warm-up that moves the figure by over 1% is not steady"
    calm = steady.assess(flat, 0.25)
    assert abs(calm.bias_pct) < 0.2 and not steady.reasons(steady.DEFAULT_RULE, calm)


def test_the_half_width_shrinks_as_the_point_grows_and_longer_asks_for_enough():
    rng = np.random.default_rng(3)
    short = steady.assess(1000 + rng.normal(0, 50, 8), 1.0)
    assert short.half_width_pct > steady.DEFAULT_RULE.max_halfwidth_pct
    seconds = steady.longer(steady.DEFAULT_RULE, short, 8.0, 8.0)
    assert seconds == float(math.ceil(seconds)), "whole seconds: sysbench takes no fraction"
    assert 8.0 < seconds <= 32.0, "never past max_factor × the profile's duration"
    grown = steady.assess(1000 + rng.normal(0, 50, int(seconds)), 1.0)
    assert grown.half_width_pct < short.half_width_pct
    assert steady.longer(steady.DEFAULT_RULE, short, 32.0, 8.0) is None, "already the longest allowed"


def test_too_few_sub_intervals_are_named_and_columns_keep_missing_missing():
    found = steady.assess([5.0, 5.1, 4.9], 1.0)
    assert math.isnan(found.half_width_pct)
    assert steady.reasons(steady.DEFAULT_RULE, found) == ["3 sub-interval(s): too few for a half-width"]
    columns = steady.columns(found, False, 3.0)
    assert columns["steady_halfwidth_pct"] is None and columns["steady"] is False
    assert steady.columns(None, None, None) == dict.fromkeys(steady.COLUMNS)
    with pytest.raises(ValueError):
        steady.assess([1.0, float("nan")], 1.0)


def test_quick_points_run_their_floor_and_record_steadiness_while_standard_points_grow():
    import kitlib

    quick = kitlib.plan("mysql", environments=["native"])
    assert quick.steady.max_factor == 1.0, "quick keeps its time promise: no growth"
    assert (
        steady.longer(quick.steady, steady.assess([1000, 1400, 700, 1200, 900, 1300, 800, 1100], 1.0), 8.0, 8.0) is None
    )
    assert kitlib.plan("mysql", environments=["native"], profile="standard").steady.max_factor == 4.0
    assert kitlib.plan("mysql", environments=["native"], steady={"max_factor": 2}).steady.max_factor == 2.0


def test_a_point_of_two_phases_is_as_steady_as_its_worse_phase():
    """Redis's SET and GET phases run at different rates: each is judged on its own ticks, and the point
    records the worse one's half-width and the bias farthest from 0 (concatenated, the step between the
    phases would read as a warm-up and widen the half-width)."""
    get = redis_benchmark.progress((DATA / "redis-benchmark" / "get-c1-p10-report.txt").read_text(), "get")["GET"]
    set_phase = steady.assess([0.9 * v for v in get], redis_benchmark.TICK_SECONDS)
    get_phase = steady.assess(get, redis_benchmark.TICK_SECONDS)
    worse = steady.assess([get[0] * 0.5, *get], redis_benchmark.TICK_SECONDS)
    both = steady.worst({"SET": set_phase, "GET": get_phase})
    assert both.half_width_pct == pytest.approx(get_phase.half_width_pct)  # a constant factor leaves it alone
    assert both.intervals == 14 and both.largest_part == 7 and both.method == "MSER-1"
    assert math.isnan(both.mean)
    mixed = steady.worst({"SET": worse, "GET": get_phase})
    assert mixed.half_width_pct == pytest.approx(max(worse.half_width_pct, get_phase.half_width_pct))
    assert mixed.bias_pct == pytest.approx(worse.bias_pct) and mixed.warmup_s == pytest.approx(worse.warmup_s)
    too_few = steady.worst({"SET": steady.assess(get[:3], 0.25), "GET": get_phase})
    assert math.isnan(too_few.half_width_pct), "a part too short for a half-width leaves the point's missing"


def test_a_phase_that_stalled_after_its_warm_up_reads_unsteady():
    """A real SET phase through slirp4netns at 48 connections: 2 s at ~320,000 requests/s, then the
    ticks read 0 for most of 28 s. Its summary's 23,160 requests/s is no steady rate, and the rule says so."""
    text = (DATA / "redis-benchmark" / "set-c48-p10-slirp4netns-stall.txt").read_text()
    ticks = redis_benchmark.progress(text, "slirp")["SET"]
    assert max(ticks) > 300_000 and sum(tick == 0 for tick in ticks) > len(ticks) / 2
    found = steady.assess(ticks, redis_benchmark.TICK_SECONDS)
    said = steady.reasons(steady.DEFAULT_RULE, found)
    assert found.half_width_pct > 100 and any("half-width" in reason for reason in said), said


def test_a_redis_point_judges_each_phase_and_one_without_a_tick_says_so():
    """The runner's reading of named parts: a phase that ended within one tick has no sub-interval and
    makes the point unsteady with its name; the other phase is still judged, and grows the point where
    the profile allows."""
    from kitlib.measure.experiments.redis import RedisWorkload
    from kitlib.measure.run.runner import Unit, _steadiness
    from kitlib.specs.redis import RedisParams

    unit = Unit(RedisWorkload(RedisParams(clients=[1], seconds=2.0)), "native", {"clients": 1, "pipeline": 10}, 0)
    get = redis_benchmark.progress((DATA / "redis-benchmark" / "get-c1-p10-report.txt").read_text(), "get")["GET"]
    found, unsteady, grown = _steadiness(unit, {"SET": ([], 0.25), "GET": ([], 0.25)}, steady.DEFAULT_RULE, 2.0)
    assert found is None and grown is None
    assert unsteady == ["SET: no sub-interval (shorter than one)", "GET: no sub-interval (shorter than one)"]
    assert steady.columns(found, False, 2.0)["steady"] is False, "judged, and not steady"
    assert steady.columns(None, None, 2.0)["steady"] is None, "not judged: missing"
    found, unsteady, grown = _steadiness(unit, {"SET": ([], 0.25), "GET": (get, 0.25)}, steady.DEFAULT_RULE, 2.0)
    assert found.intervals == 7 and found.half_width_pct == pytest.approx(steady.assess(get, 0.25).half_width_pct)
    assert unsteady[0] == "SET: no sub-interval (shorter than one)"
    assert all(reason.startswith("GET: ") for reason in unsteady[1:])
    assert (grown is None) == (len(unsteady) == 1), "only a judged phase asks for more time"


def test_a_sockperf_point_without_a_whole_window_is_unsteady_and_one_with_windows_is_judged():
    """A single series as the runner reads it: a run shorter than one window gives no sub-interval, which
    makes the point unsteady (not an error); the windows of a real log are judged by the rule."""
    from kitlib.measure.experiments.net import RequestResponseWorkload
    from kitlib.measure.parsers import rtt_windows
    from kitlib.measure.run.runner import Unit, _steadiness
    from kitlib.specs.net import NetParams

    unit = Unit(RequestResponseWorkload(NetParams(seconds=3.0)), "native", {"protocol": "udp"}, 0)
    assert unit.workload.profile_seconds() == 3.0
    assert _steadiness(unit, ([], 0.25), steady.DEFAULT_RULE, 3.0) == (
        None,
        ["no sub-interval (shorter than one)"],
        None,
    )
    windows = rtt_windows.intervals((DATA / "kit-rtt-windows" / "udp-mps400-t2.txt").read_text(), "udp")
    found, unsteady, _ = _steadiness(unit, windows, steady.DEFAULT_RULE, 3.0)
    assert found.intervals == 6 and found.interval_s == 0.25
    assert unsteady == steady.reasons(steady.DEFAULT_RULE, found)
