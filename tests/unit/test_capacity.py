"""The capacity probe's parts: its figure read from the kit's programs' real outputs, the sizes it
asks for and the command it runs; the wake-up probe runs here (a fraction of a second), the others in
tests/integration/test_interference.py around real points."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure import capacity
from kitlib.measure.experiments.net import BandwidthWorkload, RequestResponseWorkload
from kitlib.measure.experiments.redis import RedisWorkload
from kitlib.specs.net import NetParams
from kitlib.specs.redis import RedisParams

DATA = Path(__file__).parents[1] / "data"


def test_the_memory_probe_reads_triads_best_pass_and_the_cpu_probe_linpacks_counted_trials():
    stream = (DATA / "kit-stream" / "native-2threads-16m.txt").read_text()
    assert capacity.read_probe(capacity.MEMORY, stream) == pytest.approx(26.2007)
    linpack = (DATA / "kit-linpack" / "native-2threads-n2000-3trials.txt").read_text()
    assert capacity.read_probe(capacity.CPU, linpack) == pytest.approx((17.8063 + 16.6706) / 2)
    with pytest.raises(ParseError):  # cut off before it validated: no figure
        capacity.read_probe(capacity.MEMORY, stream.split("validation")[0])


def test_the_memory_probe_outgrows_the_cache_and_runs_pinned():
    # the three arrays together at least twice a 32 MiB last-level cache, and never tiny
    assert 3 * 8 * capacity.stream_elements(32 * 2**20) >= 2 * 32 * 2**20
    assert capacity.stream_elements(1 * 2**20) == 2_000_000
    argv = capacity.probe_argv(capacity.CPU, Path("/x/kit-linpack"), [2, 3])
    assert argv[-3:] == ["/x/kit-linpack", str(capacity.LINPACK_N), str(capacity.LINPACK_TRIALS)]
    assert argv[:3] == ["taskset", "-c", "2,3"] or argv[0] == "/x/kit-linpack"


def test_the_wakeup_probe_crosses_the_points_first_and_last_cpu_and_reads_its_own_rate():
    pair = (DATA / "kit-pingpong" / "native-cpus-0-1-3000.txt").read_text()
    assert capacity.read_probe(capacity.WAKEUP, pair) == pytest.approx(28253.9)
    argv = capacity.probe_argv(capacity.WAKEUP, Path("/x/kit-pingpong"), [3, 1, 2])
    assert argv == ["/x/kit-pingpong", str(capacity.PINGPONG_ROUND_TRIPS), "1", "3"]
    with pytest.raises(ParseError, match="does not follow"):  # a rate its count and time do not give
        capacity.read_probe(capacity.WAKEUP, pair.replace("28253.9", "38253.9"))


def test_the_wakeup_probe_runs_on_this_host_and_refuses_a_cpu_it_cannot_use():
    if capacity.host_program("kit-pingpong") is None:
        pytest.skip("no C compiler here to build the kit's programs")
    mine = sorted(os.sched_getaffinity(0))
    rate = capacity.run_probe(capacity.WAKEUP, [mine[0], mine[-1]])
    assert rate is not None and rate > 100  # 3000 round trips in well under the probe's 60-s bound
    assert capacity.run_probe(capacity.WAKEUP, [mine[0], max(mine) + 64]) is None  # the echo cannot be pinned


def test_a_point_is_probed_for_the_capacity_its_figure_rests_on():
    redis = RedisWorkload(RedisParams(clients=[1, 8, 48], seconds=2.0))
    kinds = [redis.probe_kind({"clients": c, "pipeline": 10}) for c in (1, 8, 9, 10, 48)]
    assert kinds == [capacity.WAKEUP, capacity.WAKEUP, capacity.WAKEUP, capacity.CPU, capacity.CPU]
    assert redis.probe_kind({"clients": 1, "pipeline": 100}) == capacity.CPU  # 100 in flight on one connection
    assert RequestResponseWorkload(NetParams(seconds=3.0)).probe_kind({"protocol": "tcp"}) == capacity.WAKEUP
    assert BandwidthWorkload(NetParams(seconds=3.0)).probe_kind({"direction": "sut_rx"}) == capacity.CPU


def test_a_share_needs_both_probes_and_a_usual_figure():
    probes = capacity.RunCapacity([0])
    assert probes.share_pct(capacity.MEMORY, 10.0, 12.0) is None  # no usual figure yet
    probes.readings[capacity.MEMORY] = [40.0, 44.0, 42.0, 10.0, 12.0]
    assert probes.usual(capacity.MEMORY) == 40.0
    assert probes.share_pct(capacity.MEMORY, 10.0, 12.0) == 25.0
    assert probes.share_pct(capacity.MEMORY, None, 12.0) is None


def test_the_probes_spread_is_their_median_deviation_which_a_dip_barely_moves():
    """Five seeds give a spread; a dip of two probes among a dozen leaves it near the routine's."""
    assert capacity.spread_pct([40.0, 44.0, 42.0, 41.0]) is None  # fewer than the seeds
    routine = [40.0, 44.0, 42.0, 41.0, 43.0]
    assert capacity.spread_pct(routine) == pytest.approx(100 * 1.4826 / 42, abs=0.05)
    dipped = routine * 2 + [20.0, 21.0]
    assert capacity.spread_pct(dipped) < 1.6 * capacity.spread_pct(routine)
    probes = capacity.RunCapacity([0])
    assert probes.spread_pct(capacity.CPU) is None
    probes.readings[capacity.CPU] = routine
    assert probes.spread_pct(capacity.CPU) == capacity.spread_pct(routine)


def test_a_host_that_cannot_build_the_probe_tries_once(tmp_path, monkeypatch):
    """No OpenBLAS, say: the probe is missing, and the build is not tried again before every point."""
    import os

    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    calls = tmp_path / "calls"
    (stand_ins / "cc").write_text(f"#!/bin/sh\necho called >> {calls}\nexit 1\n")
    (stand_ins / "cc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stand_ins}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KIT_CACHE", str(tmp_path / "cache"))
    assert capacity.host_program("kit-stream") is None
    assert capacity.host_program("kit-linpack") is None
    assert capacity.run_probe(capacity.MEMORY, [0]) is None
    assert calls.read_text().splitlines() == ["called"]


def test_neighbouring_points_share_one_probe_and_a_start_between_them_does_not():
    """The probe after a point serves as the next point's probe before it when no environment stopped or
    started between them; the run's probing time is counted."""
    probes = capacity.RunCapacity([0])
    first = probes.before(capacity.CPU)
    if first is None:
        pytest.skip("no CPU probe on this host (no C compiler or OpenBLAS)")
    after = probes.after(capacity.CPU)
    taken = len(probes.readings[capacity.CPU])
    assert probes.before(capacity.CPU) == after and probes.shared == 1  # the neighbour's, none taken
    assert len(probes.readings[capacity.CPU]) == taken
    probes.after(capacity.CPU)
    probes.forget_neighbour()  # an environment's start between the two
    probes.before(capacity.CPU)
    assert probes.shared == 1 and len(probes.readings[capacity.CPU]) == taken + 2
    assert probes.spent_s > 0
