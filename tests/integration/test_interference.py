"""A point measured while a busy loop runs on the system under test's CPU is caught as disturbed,
measured again, and its discarded attempt kept with the reason (kitlib.core.interference)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import kitlib
from kitlib.analyse import stability
from kitlib.measure import cpus
from kitlib.measure.run import rejudge

from ..conftest import leftovers


@pytest.mark.netns
def test_a_point_disturbed_by_a_cpu_hog_is_measured_again(root_netns, docker_client, isolated_dirs):
    results, _ = isolated_dirs
    sut_cpu = cpus.split(1).sut_cpus[-1]
    # bounded by itself (timeout) and killed as a group below however the test ends
    hog = subprocess.Popen(
        ["taskset", "-c", str(sut_cpu), "timeout", "120", "sh", "-c", "while :; do :; done"],
        start_new_session=True,
    )
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "kitlib.cli",
                "run",
                "net",
                "--env",
                "native",
                "--no-notebook",
                "--repetitions",
                "1",
                "--max-attempts",
                "2",
                "-p",
                "workloads",
                '["rr"]',
                "-p",
                "seconds",
                "3",  # long enough for other processes' CPU to be judged (Rule.foreign_cpu_min_seconds)
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "KIT_RESULTS": str(results)},
        )
    finally:
        os.killpg(hog.pid, signal.SIGKILL)
        hog.wait(timeout=10)
    print(run.stdout[-2000:], run.stderr[-2000:])
    assert run.returncode == 0, run.stderr
    run_dir = next(results.glob("net/*"))
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["attempt"]) == {2} and set(records["discarded_attempts"]) == {1}
    for column in ("steal_pct", "foreign_cpu_pct", "runqueue_mean", "cpu_mhz", "disturbed"):
        assert column in records.columns
    assert records["cpu_mhz"].isna().all() or (records["cpu_mhz"] > 0).all()  # missing where unreported, never 0
    discarded = sorted((run_dir / "units").glob("*.attempt1.json"))
    assert len(discarded) == 2  # one per point (tcp, udp)
    for path in discarded:
        attempt = json.loads(path.read_text())
        assert attempt["status"] == "discarded"
        assert attempt["reason"].startswith("disturbed: ") and "CPU of other processes" in attempt["reason"]
        assert attempt["interference"]["figures"]["foreign_cpu_pct"] > 10
        assert attempt["records"]  # what it measured is kept, never mixed into records.csv
        assert (run_dir / "raw" / f"{path.stem}.sockperf.txt").exists()
        kept = json.loads((run_dir / "units" / path.name.replace(".attempt1", "")).read_text())
        assert kept["status"] == "ok" and kept["interference"]["attempt"] == 2
        assert kept["interference"]["discarded_attempts"][0]["file"] == f"units/{path.name}"
    assert "point(s) measured again" in run.stdout
    assert leftovers(docker_client) == []


#: busy loops per CPU of the point, each as runnable as the probe: it gets a third of the CPU
HOGS_PER_CPU = 2


def test_the_capacity_probe_sees_a_machine_slowed_by_what_no_process_of_the_run_shows():
    """Busy loops on every CPU the point uses (as another tenant's load would be: not the run's, and here
    not even counted as steal) bring the CPU probe around a point below 90% of the run's usual. The
    Linpack probe's figure is over all its trials, so time taken by others always shows; STREAM's is its
    best pass, which a pass the scheduler leaves whole can keep near the usual (memory probes answer
    another tenant's memory traffic, not its CPU time)."""
    from kitlib.core.interference import Figures, Rule
    from kitlib.measure import capacity

    sut = list(cpus.split(1).sut_cpus)
    probes = capacity.RunCapacity(sut)
    quiet = probes.before(capacity.CPU)
    assert quiet is not None and len(probes.readings[capacity.CPU]) == capacity.SEED_READINGS + 1
    assert probes.share_pct(capacity.CPU, quiet, probes.after(capacity.CPU)) > 0
    hogs = [
        subprocess.Popen(
            ["taskset", "-c", str(cpu), "timeout", "120", "sh", "-c", "while :; do :; done"],
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        for cpu in sut
        for _ in range(HOGS_PER_CPU)
    ]
    try:
        before, after = probes.before(capacity.CPU), probes.after(capacity.CPU)
    finally:
        for hog in hogs:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait(timeout=10)
    share = probes.share_pct(capacity.CPU, before, after)
    print(f"usual {probes.usual(capacity.CPU):.1f} GFLOPS, under the loops {before:.1f} and {after:.1f}: {share}%")
    assert share < 90
    reasons = Rule().reasons(Figures(3.0, 0.0, 0.0, 1.0, 2.0, 12, None, capacity_pct=share))
    assert reasons == [f"machine at {share:.0f}% of its usual capacity < 90%"]


def _hogs(cpu_ids: list[int], seconds: int) -> list[subprocess.Popen]:
    """Busy loops, HOGS_PER_CPU on each CPU, that end by themselves after `seconds`."""
    return [
        subprocess.Popen(
            ["taskset", "-c", str(cpu), "timeout", str(seconds), "sh", "-c", "while :; do :; done"],
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        for cpu in cpu_ids
        for _ in range(HOGS_PER_CPU)
    ]


def test_a_point_on_a_slowed_machine_waits_for_it_to_come_back():
    """The wait before measuring a slowed point again: while the busy loops run the probe stays low and
    the wait ends at its bound, saying the machine did not come back; loops that end after 4 s end the
    next wait soon after, the machine back."""
    from kitlib.measure import capacity

    sut = list(cpus.split(1).sut_cpus)
    probes = capacity.RunCapacity(sut)
    assert probes.before(capacity.CPU) is not None
    hogs = _hogs(sut, 120)
    try:
        waited, back = probes.recover(capacity.CPU, 90.0, timeout=3.0)
    finally:
        for hog in hogs:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait(timeout=10)
    assert not back and waited < 10  # its 3-s bound, and the one probe that crossed it
    seeded = list(probes.readings[capacity.CPU])
    hogs = _hogs(sut, 4)
    try:
        waited, back = probes.recover(capacity.CPU, 90.0, timeout=120.0)
        ended = [hog.poll() is not None for hog in hogs]
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, signal.SIGKILL)
            hog.wait(timeout=10)
    print(f"back after {waited} s")
    assert back and all(ended)  # it read the usual figure only once the loops had ended
    assert probes.readings[capacity.CPU] == seeded  # the wait's probes leave the usual figure alone


def test_the_plan_s_rule_decides_and_is_recorded(isolated_dirs):
    """A rule no point can meet (a run queue of 0: the sampler's own read is runnable) measures every
    point max_attempts times, whatever else runs here; the plan and every unit record the rule."""
    results, _ = isolated_dirs
    rule = {"max_runqueue": 0, "max_attempts": 2}
    plan = kitlib.plan(
        "net", environments=["native"], peer="loopback", repetitions=1, workloads=["rr"], seconds=1, interference=rule
    )
    result = kitlib.run(plan, results_root=results, progress=False)
    assert json.loads((result.root / "plan.json").read_text())["plan"]["interference"]["max_runqueue"] == 0
    records = result.records
    assert set(records["attempt"]) == {2} and set(records["discarded_attempts"]) == {1}
    assert records["disturbed"].all() and (records["runqueue_mean"] >= 1).all()
    attempts = sorted((result.root / "units").glob("*.attempt1.json"))
    assert len(attempts) == 2  # tcp and udp
    for path in attempts:
        attempt = json.loads(path.read_text())
        assert attempt["status"] == "discarded" and "run queue" in attempt["reason"]
        assert attempt["interference"]["rule"] == plan.interference.model_dump(mode="json")
    assert "2 of 2 point(s) measured again" in stability.report(records)


def test_once_points_in_a_row_were_kept_disturbed_a_disturbed_point_is_kept_after_its_first_attempt(isolated_dirs):
    """The same rule no point meets, with weather_after 1: the first point is measured max_attempts
    times, and each after it, the machine still disturbed, once; the run's end measures none once more
    (all of them disturbed: the machine's state), and the records and unit files say why."""
    results, _ = isolated_dirs
    rule = {"max_runqueue": 0, "max_attempts": 3, "weather_after": 1}
    plan = kitlib.plan(
        "net", environments=["native"], peer="loopback", repetitions=2, workloads=["rr"], seconds=1, interference=rule
    )
    result = kitlib.run(plan, results_root=results, progress=False)
    records = result.records.sort_values("position")
    by_point = records.groupby("position")[["attempt", "discarded_attempts", "disturbed"]].first()
    assert len(by_point) == 4 and by_point["disturbed"].all()
    assert by_point["attempt"].tolist() == [3, 1, 1, 1] and by_point["discarded_attempts"].tolist() == [2, 0, 0, 0]
    assert len(list((result.root / "units").glob("*.attempt*.json"))) == 2  # the first point's only
    kept = [json.loads(p.read_text()) for p in (result.root / "units").glob("*.json") if ".attempt" not in p.name]
    held = sorted(u["interference"].get(rejudge.HELD, "") for u in kept)
    assert held[0] == "" and all(h.startswith("kept after attempt 1: the ") for h in held[1:]), held
    assert "weather_after 1" in held[-1]


def test_a_quiet_ping_pong_of_the_run_s_own_reads_no_other_process():
    """A one-connection Redis ping-pong (the run's own server and client, children of this process)
    makes both CPUs idle and wake many thousand times a second, where /proc/stat's ticks go missing:
    the machine's busy time minus the run's own read about -7% of the machine here. Summed process by
    process, other processes' share is what they used: none of them is busy, so it stays small."""
    import shutil

    from kitlib.core import interference
    from kitlib.measure.host.ports import free_ports

    if not (shutil.which("redis-server") and shutil.which("redis-benchmark")):
        pytest.skip("redis-server and redis-benchmark are not installed")
    port = str(free_ports(1)[0])
    server = subprocess.Popen(
        ["redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        cli = ["redis-cli", "-p", port, "PING"]
        for _ in range(100):  # bounded: 10 s for the server to answer
            if subprocess.run(cli, capture_output=True, text=True, timeout=10).stdout.strip() == "PONG":
                break
            time.sleep(0.1)
        stat_before = interference.read_proc_stat()
        with interference.PointSampler(None) as sampler:
            subprocess.run(
                ["timeout", "60", "redis-benchmark", "-p", port, "-c", "1", "-n", "100000", "-q", "GET", "k"],
                capture_output=True,
                timeout=90,
                check=True,
            )
        stat_after = interference.read_proc_stat()
    finally:
        server.terminate()
        server.wait(timeout=30)
    fig = sampler.figures
    ticks = stat_after.cpu.total - stat_before.cpu.total
    capacity = fig.wall_s * len(stat_after.per_cpu) * os.sysconf("SC_CLK_TCK")
    print(f"other processes {fig.foreign_cpu_pct}% of the machine; /proc/stat counted {ticks} of {capacity:.0f} ticks")
    assert fig.own_cpu_s > 0.2 * fig.wall_s  # the ping-pong ran, as the run's own
    assert 0 <= fig.foreign_cpu_pct < interference.DEFAULT_RULE.max_foreign_cpu_pct


#: tries of the run's-end scenario: on a shared host the whole machine's own probes may spread so widely
#: that the run's end rightly finds two regimes and judges nothing, steal may take every attempt of the
#: first point, or so many of the later points that no usual figure is left; each try takes about 20 s
RUN_END_TRIES = 3


def scenario_rule():
    """The rule's fixed floor: one CPU's Linpack is about 70% of two here, which a shared host's spread of
    probes can make its routine (a floor from the spread is the unit tests' and the Redis test's)."""
    from kitlib.core.interference import Rule

    return Rule(capacity_outlier_spreads=None)


def _small_start_then_whole_machine(results):
    """A Linpack run's first repetition on one of the CPUs, then five on all: the first run's point, the
    grown run's result, and the notices the grown run gave."""
    import warnings

    import kitlib
    from kitlib.measure.store import RunStore

    everything = cpus.available_cpus()
    plan = kitlib.plan(
        "cpu",
        environments=["native"],
        repetitions=1,
        workloads=["linpack"],
        linpack_n=1500,
        interference=scenario_rule(),
    )
    os.sched_setaffinity(0, everything[:1])
    try:
        first = kitlib.run(plan, results_root=results, progress=False)
    finally:
        os.sched_setaffinity(0, everything)
    store = RunStore(first.root)
    (small,) = [u for u in store.units() if u["status"] == "ok"]
    # five points on the whole machine, so that the whole run's figure is theirs even where a shared
    # host's dip takes one of them out
    for repetition in range(1, 6):
        store.add_extension(repetition, ["native"], ["linpack"], ["test: the machine after the change"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        final = kitlib.run(plan, results_root=results, progress=False)
    return small, final, [str(w.message) for w in caught]


def test_points_measured_before_the_machine_changed_are_measured_again_at_the_run_s_end(isolated_dirs):
    """A run whose first repetition had half the machine (one of its CPUs, as a cgroup's cpuset or a
    resized guest gives) keeps that repetition's point while it runs: the point's probes meet the usual
    figure of their time. At the run's end, held against the probes of the whole run, the point is found
    and measured again; the attempt it had is kept with the reason, its records and its raw output. The
    later points are the rule of the moment's and the run's end's as on any run: a shared host's dip may
    measure one of them again, which is not what this test is about. Where the whole machine's probes
    spread so widely that the run's end finds two regimes, it judges nothing, says so, and the scenario
    is tried again (a bounded number of times); so it is where every attempt of the first point found
    the machine disturbed, which leaves the run's end no normal point to judge, where the later points
    were so disturbed that fewer than three of them give the whole run's usual figure, or where one CPU
    measured no less than two (a host whose second vCPU is busy elsewhere: no smaller machine)."""
    from kitlib.measure import capacity
    from kitlib.measure.run import rejudge
    from kitlib.measure.store import RunStore

    if len(cpus.available_cpus()) < 2:
        pytest.skip("one CPU: no smaller machine to start the run on")
    unjudged = []
    for attempt_number in range(RUN_END_TRIES):
        small, final, notices = _small_start_then_whole_machine(isolated_dirs[0] / f"try{attempt_number}")
        assert small["interference"]["capacity_probes"]["kind"] == capacity.CPU
        if small["interference"]["disturbed"]:  # a shared host's steal or dip took every attempt it had
            unjudged.append(f"every attempt of the first point disturbed: {small['interference']['disturbed']}")
            continue
        kept_as = int(small["interference"]["attempt"])
        again = final.records[final.records["repetition"] == 0]
        if int(again["attempt"].max()) > kept_as:
            break
        usual = rejudge.whole_run_usual(RunStore(final.root).units()).get(capacity.CPU)
        if usual is None:
            unjudged.append("too few undisturbed points for the whole run's usual figure")
            continue
        probes = small["interference"][rejudge.ENTRY]
        share = 100.0 * min(probes["before"], probes["after"]) / usual
        if not scenario_rule().capacity_reasons(share):  # a host whose second CPU is busy gives two no more than one
            unjudged.append(f"one CPU's probes at {share:.0f}% of the whole machine's: no smaller machine")
            continue
        two_regimes = [n for n in notices if "two regimes" in n]
        assert two_regimes, f"the point was not measured again and the run's end said nothing: {notices}"
        unjudged.append(two_regimes[0])
    else:
        pytest.skip(f"no try of {RUN_END_TRIES} left the run's end a point to judge: {unjudged}")
    assert len(set(again["attempt"])) == 1
    kept = json.loads((final.root / "units" / f"{small['key']}.json").read_text())
    reopened = [
        d for d in kept["interference"]["discarded_attempts"] if d["reason"].startswith("judged at the run's end")
    ]
    assert [d["file"] for d in reopened] == [f"units/{small['key']}.attempt{kept_as}.json"], kept["interference"]
    attempt = json.loads((final.root / "units" / f"{small['key']}.attempt{kept_as}.json").read_text())
    print(attempt["reason"])
    assert attempt["status"] == "discarded"
    assert attempt["reason"].startswith("judged at the run's end against the whole run's usual cpu probe figure")
    assert "of its usual capacity < 90%" in attempt["reason"]
    assert attempt["records"] == small["records"]  # what it measured is kept, never mixed into records.csv
    assert attempt["raw_files"] and all((final.root / raw).exists() for raw in attempt["raw_files"])
    assert all(f".attempt{kept_as}." in raw for raw in attempt["raw_files"])
    # the session that measured it again says why, beside the sessions of the plan's own points
    purposes = [s.get("purpose") for s in json.loads((final.root / "provenance.json").read_text())["sessions"]]
    # (a later point disturbed in every attempt may be measured once more in the same session)
    assert purposes[-1] in ("measured again: the machine changed under the run", "measured again at the run's end")
    assert None in purposes[:-1]
