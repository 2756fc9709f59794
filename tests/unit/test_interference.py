"""Interference figures of a point: the parsers on /proc and /sys files captured on a 2-CPU VM guest
(tests/data/proc, taken two seconds apart while the machine was fully busy), the own-CPU ledger, the
rule, the sampler's thread, and the rule recorded in the plan."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
import time
from pathlib import Path

import pytest

import kitlib
from kitlib.core import interference
from kitlib.core.errors import ParseError
from kitlib.core.interference import CpuLedger, Figures, Rule
from kitlib.measure.planning import Plan
from kitlib.measure.run.runner import DisturbedStreak

from ..support.busy_loop import orphan_busy_loop

DATA = Path(__file__).parents[1] / "data" / "proc"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_proc_stat_gives_the_aggregate_each_cpu_and_the_run_queue():
    stat = interference.parse_proc_stat(read("stat.before"))
    assert stat.cpu == interference.CpuTimes(52074, 0, 9477, 268984, 553, 0, 123, 41)
    assert sorted(stat.per_cpu) == [0, 1]
    assert stat.per_cpu[1].user == 28884
    assert stat.procs_running == 3
    assert interference.parse_proc_stat(read("stat.after")).procs_running == 4


def test_a_cut_off_proc_stat_is_an_error_naming_the_file():
    text = read("stat.before")
    with pytest.raises(ParseError, match="procs_running"):
        interference.parse_proc_stat(text[: text.index("intr")], "stat.before")
    with pytest.raises(ParseError, match="fewer than 8 counters"):
        interference.parse_proc_stat("cpu  52074 0 9477\n", "cut")


def test_loadavg():
    load = interference.parse_loadavg(read("loadavg"))
    assert (load.load1, load.load5, load.load15, load.runnable, load.threads) == (2.44, 1.42, 0.66, 4, 156)
    with pytest.raises(ParseError, match="loadavg"):
        interference.parse_loadavg("2.44 1.42\n")


def test_pid_stat_takes_comm_up_to_the_last_parenthesis():
    odd = interference.parse_pid_stat(read("pid-stat-odd-comm"))
    assert (odd.pid, odd.comm, odd.state, odd.ppid) == (17601, "odd) name (x", "S", 17600)
    shell = interference.parse_pid_stat(read("pid-stat-shell"))
    assert (shell.utime, shell.stime, shell.cutime, shell.cstime, shell.starttime) == (1, 4, 53, 12, 130199)
    assert shell.ticks == 70
    kthread = interference.parse_pid_stat(read("pid-stat-kthread"))
    assert (kthread.comm, kthread.ppid, kthread.ticks) == ("kthreadd", 0, 0)
    with pytest.raises(ParseError, match="fewer than 22 fields"):
        interference.parse_pid_stat(read("pid-stat-shell")[:60], "cut")


def test_cgroup_files():
    groups = interference.parse_pid_cgroup(read("pid-cgroup-v1-hybrid"))
    assert groups["cpuacct"] == "/" and groups[""] == "/"
    assert groups["memory"] == "/process_api/bf1be323b53277144290f735b1564d69"
    assert interference.parse_cpuacct_usage(read("cgroup-v1-cpuacct.usage")) == pytest.approx(627.731085133)
    assert interference.parse_cpu_stat(read("cgroup-v2-cpu.stat")) == pytest.approx(621.446971)
    with pytest.raises(ParseError):
        interference.parse_cpu_stat("user_usec 1\n")
    with pytest.raises(ParseError):
        interference.parse_cpuacct_usage("")


def test_cgroup_seconds_reads_v2_then_v1(tmp_path):
    (tmp_path / "cpuacct" / "docker" / "abc").mkdir(parents=True)
    (tmp_path / "cpuacct" / "docker" / "abc" / "cpuacct.usage").write_text(read("cgroup-v1-cpuacct.usage"))
    assert interference.cgroup_seconds("/docker/abc", tmp_path) == pytest.approx(627.731085133)
    (tmp_path / "unified" / "docker" / "abc").mkdir(parents=True)
    (tmp_path / "unified" / "docker" / "abc" / "cpu.stat").write_text(read("cgroup-v2-cpu.stat"))
    assert interference.cgroup_seconds("/docker/abc", tmp_path) == pytest.approx(621.446971)
    assert interference.cgroup_seconds("/docker/gone", tmp_path) is None


def test_the_clock_is_missing_where_the_kernel_reports_none(tmp_path):
    # this host (a VM guest) has no cpufreq: missing, never 0
    assert interference.cpu_mhz([0, 1]) is None
    # the layout a kernel with cpufreq has; the value is in kHz
    (tmp_path / "cpu1" / "cpufreq").mkdir(parents=True)
    (tmp_path / "cpu1" / "cpufreq" / "scaling_cur_freq").write_text("2596000\n")
    assert interference.cpu_mhz([0, 1], tmp_path) == 2596.0


def test_figures_from_two_captured_readings():
    before, after = (interference.parse_proc_stat(read(n)) for n in ("stat.before", "stat.after"))
    fig = interference.figures(before, after, 2.0, 0.5, foreign_cpu_s=3.54, runqueue=[3, 4, 5], mhz=[], ncpus=2)
    # 404 ticks passed (2 s x 2 CPUs), no steal; other processes used 3.54 s of the 4 s the 2 CPUs had
    assert fig.steal_pct == 0.0
    assert fig.foreign_cpu_pct == pytest.approx(100 * 3.54 / 4.0, abs=0.01)
    assert fig.runqueue_mean == 4.0 and fig.runqueue_samples == 3
    assert fig.cpu_mhz is None
    assert fig.columns() == {
        "steal_pct": 0.0,
        "foreign_cpu_pct": 88.5,
        "runqueue_mean": 4.0,
        "cpu_mhz": None,
        "capacity_pct": None,
    }
    unknown = interference.figures(before, after, 2.0, None, None, [], [], 2)
    assert unknown.foreign_cpu_pct is None and unknown.runqueue_mean is None and unknown.own_cpu_s is None


def test_the_kernel_s_own_threads_are_neither_the_run_s_nor_another_process_s():
    """Writeback and journal threads doing a point's random writes are the kernel's work for it, not
    another tenant's: their CPU time is left out of other processes' share."""
    before, after = (interference.parse_proc_stat(read(f"stat.loopback.{n}")) for n in ("before", "after"))
    first, last = {(2, 24): 0, (31, 90): 500}, {(2, 24): 0, (31, 90): 530, (4000, 777): 12}  # a kworker started
    kernel = interference.kernel_seconds(first, last, clk_tck=100)
    assert kernel == pytest.approx(0.42)
    assert interference.figures(before, after, 2.0, 1.0, 0.0, [2], [], 2, kernel_cpu_s=kernel).kernel_cpu_s == 0.42


def test_which_kernels_charge_interrupt_time_to_processes(tmp_path):
    import gzip

    proc, boot = tmp_path / "proc", tmp_path / "boot"
    proc.mkdir()
    boot.mkdir()
    # nothing published: false (a network point's own softirq is never taken for someone else's)
    assert interference.irq_time_in_processes(proc, boot) is False
    # this host's kernel (an excerpt of its /proc/config.gz): tick accounting without IRQ time accounting
    (proc / "config.gz").write_bytes(gzip.compress(read("config.tick-accounting").encode()))
    assert interference.kernel_config(proc, boot)["CONFIG_HZ"] == "250"
    assert interference.irq_time_in_processes(proc, boot) is True
    # a kernel built with it, read from /boot, and the same kernel booted with tsc=noirqtime
    (proc / "config.gz").unlink()
    import os

    (boot / f"config-{os.uname().release}").write_text("CONFIG_IRQ_TIME_ACCOUNTING=y\n")
    assert interference.irq_time_in_processes(proc, boot) is False
    (proc / "cmdline").write_text("root=/dev/vda tsc=noirqtime quiet\n")
    assert interference.irq_time_in_processes(proc, boot) is True


def test_ledger_counts_a_reaped_child_once_and_an_orphan_by_its_last_reading():
    ledger = CpuLedger()
    parent, child, orphan = (10, 1), (11, 2), (12, 3)
    ledger.add({parent: (1, 100), child: (10, 40), orphan: (1, 7)}, {"/docker/c": 5.0})
    ledger.add({parent: (1, 100), child: (10, 60), orphan: (1, 9), (13, 4): (10, 5)}, {"/docker/c": 6.5})
    # the child exits and the parent reaps it (cutime += its 70 ticks); the orphan exits unreaped by the run
    final = {parent: (1, 100 + 70 + 5)}  # the new process 13 exited too and was reaped by the parent
    ledger.add(final, {})
    seconds = ledger.seconds(final, clk_tck=100)
    # parent +75 (the child's 30 of this point and its earlier 40, process 13's 5), child -40 (its start,
    # inside the parent's cutime now), orphan +2 (its last reading), the container's cgroup +1.5 s
    assert seconds == pytest.approx((75 - 40 - 0 + 2) / 100 + 1.5)
    assert ledger.process_seconds(final, clk_tck=100) == pytest.approx((75 - 40 - 0 + 2) / 100)


def test_other_processes_count_where_the_time_of_an_exited_one_went():
    """Other processes' time from a ledger of every process: a child another process reaped counts
    through its reaper's cutime; a daemon of the run reaped by pid 1 leaves pid 1 only its time after
    the last reading; another's process reaped by the run counts by its last reading."""
    ledger = CpuLedger()
    init, busy, child, daemon, stray, runs = (1, 1), (20, 5), (21, 6), (30, 7), (40, 8), (50, 9)
    others = {init, busy, child, stray}
    ledger.add({init: (0, 1000), busy: (1, 100), child: (20, 10), daemon: (1, 500), runs: (0, 0)}, {})
    ledger.add({init: (0, 1000), busy: (1, 130), child: (20, 15), daemon: (1, 520), stray: (50, 7), runs: (0, 0)}, {})
    # the child exits (18 ticks in all) and `busy` reaps it; the run's daemon exits (525) and pid 1 reaps
    # it; the stray, reparented to a process of the run, exits and is reaped there
    final = {init: (0, 1000 + 525), busy: (1, 130 + 18), runs: (0, 7)}
    ledger.add(final, {})
    found = ledger.others_ticks(final, others)
    assert found == {init: 5, busy: 38, stray: 7}
    # busy's 30 and the child's 8 of this point, pid 1's 5 after the daemon's last reading, the stray's 7
    assert sum(found.values()) == 30 + 8 + 5 + 7


def test_rule_names_each_threshold_crossed():
    quiet = Figures(2.0, 0.1, 3.0, 1.0, 2.5, 8, None)
    busy = Figures(2.0, 4.0, 48.2, 1.0, 5.0, 8, 1200.0)
    assert Rule().reasons(quiet) == []
    assert Rule().reasons(None) == []
    assert Rule().reasons(busy) == ["steal 4.0% > 2%", "CPU of other processes 48.2% > 10%"]
    short = Figures(0.8, 4.0, 48.2, 1.0, 5.0, 3, None)  # a point of 0.8 s: other processes' CPU not judged
    assert Rule().reasons(short) == ["steal 4.0% > 2%"]
    assert Rule(foreign_cpu_min_seconds=0).reasons(short)[1] == "CPU of other processes 48.2% > 10%"
    strict = Rule(max_runqueue=3, min_mhz=2000, max_steal_pct=None)
    assert strict.reasons(busy) == [
        "CPU of other processes 48.2% > 10%",
        "run queue 5.00 > 3",
        "CPU clock 1200 MHz < 2000 MHz",
    ]
    named = Figures(2.0, 0.0, 48.2, 1.0, 5.0, 8, None, busiest_others=({"command": "x{v}", "pid": 7, "cpu_s": 1.9},))
    assert Rule().reasons(named) == ["CPU of other processes 48.2% > 10% (busiest: x{v} 1.90 s)"]
    missing = Figures(2.0, None, None, None, None, 0, None)
    assert strict.reasons(missing) == []  # a missing figure is no reason
    slowed = Figures(2.0, 0.0, 0.7, 1.0, 2.5, 8, None, capacity_pct=65.3)  # another tenant's memory traffic
    assert Rule().reasons(slowed) == ["machine at 65% of its usual capacity < 90%"]
    assert Rule(min_capacity_pct=None).reasons(slowed) == []
    faster = Figures(2.0, 0.0, 0.0, 1.0, 3.0, 8, None, capacity_pct=147.2)  # the sample's LXC memory run
    assert Rule().reasons(faster) == [
        "machine at 147% of the run's usual figure (the machine changed under the run) > 111%"
    ]
    assert interference.SLOWED not in Rule().reasons(faster)[0], "a faster machine is not waited for"
    steady = Figures(2.0, 0.0, 0.0, 1.0, 3.0, 8, None, capacity_pct=110.9)
    assert Rule().reasons(steady) == [] and Rule(max_capacity_pct=None).reasons(faster) == []
    with pytest.raises(ValueError):
        Rule(max_capacity_pct=95)  # a ceiling below the usual figure would flag every point


def test_a_run_whose_probes_spread_widely_is_judged_beyond_their_routine():
    """A busy cloud guest's probes spread by about 10%: 80% is their routine there, 65% is not. Where the
    probes spread by 2% (a quiet guest), the rule's own 90% stands."""
    routine = Figures(2.0, 0.0, 0.0, 1.0, 2.5, 8, None, capacity_pct=80.0, capacity_spread_pct=10.0)
    assert Rule().capacity_floor(10.0) == 70.0 and Rule().capacity_ceiling(10.0) == 142.9
    assert Rule().reasons(routine) == []
    slowed = dataclasses.replace(routine, capacity_pct=65.0)
    assert Rule().reasons(slowed) == [
        "machine at 65% of its usual capacity < 70% (3 × 10%, the spread of the run's probes)"
    ]
    changed = dataclasses.replace(routine, capacity_pct=150.0)
    assert Rule().reasons(changed) == [
        "machine at 150% of the run's usual figure (the machine changed under the run) > 142.9% "
        "(3 × 10%, the spread of the run's probes)"
    ]
    quiet = dataclasses.replace(routine, capacity_spread_pct=2.0)
    assert Rule().capacity_floor(2.0) == 90.0 and Rule().capacity_ceiling(2.0) == 111.0
    assert Rule().reasons(quiet) == ["machine at 80% of its usual capacity < 90%"]
    assert Rule(capacity_outlier_spreads=None).reasons(routine) == ["machine at 80% of its usual capacity < 90%"]
    assert Rule().capacity_floor(40.0) == 0.0 and Rule().capacity_ceiling(40.0) is None  # no probe to judge by
    assert Rule(min_capacity_pct=None).capacity_floor(10.0) is None
    with pytest.raises(ValueError):
        Rule(max_attempts=0)


def test_sampler_stops_its_thread_however_the_block_ends():
    with interference.PointSampler([0]) as sampler:
        time.sleep(0.6)
    assert sampler.figures is not None and sampler.figures.runqueue_samples >= 1
    assert sampler.figures.runqueue_mean >= 1  # the sampler's own read is runnable
    with pytest.raises(RuntimeError), interference.PointSampler([0]):
        raise RuntimeError("measurement failed")
    assert not [t for t in threading.enumerate() if t.name == "kit-interference"]


def test_a_point_whose_own_cpu_cannot_be_told_records_none_and_still_the_others_share():
    """An LXC point (commands through lxc-attach, counted twice): its own CPU missing, never a number;
    the other processes' share is summed apart and recorded."""
    with interference.PointSampler([0], own_unknown=interference.LXC_OWN_UNKNOWN) as sampler:
        time.sleep(0.6)
    fig = sampler.figures
    assert fig is not None and fig.own_cpu_s is None and sampler.own_unknown.startswith("an LXC point")
    assert fig.foreign_cpu_pct is not None and fig.steal_pct is not None and fig.runqueue_samples >= 1
    with interference.PointSampler([0]) as plain:
        time.sleep(0.6)
    assert plain.figures.own_cpu_s is not None and plain.own_unknown is None


def test_sampler_counts_a_child_of_the_run_as_its_own():
    """A busy child of this process (reaped by it) is the run's own CPU, not foreign."""
    with interference.PointSampler([0]) as sampler:
        subprocess.run(["timeout", "1", "sh", "-c", "while :; do :; done"], check=False)
    fig = sampler.figures
    assert fig is not None and fig.own_cpu_s is not None
    assert fig.own_cpu_s > 0.2  # the loop ran for a second (less where the host is busy)


def skip_unless_quiet(limit_pct: float = 5.0) -> None:
    """Skip, saying why, where other processes (another kit session, a test suite beside this one) keep the
    machine busy: the test's premise is that the only other process is the one it starts."""
    with interference.PointSampler([0]) as before:
        time.sleep(1.0)
    busy = before.figures.foreign_cpu_pct if before.figures is not None else None
    if busy is not None and busy > limit_pct:
        pytest.skip(f"the machine is not quiet: other processes used {busy:.0f}% of it before the test")


def test_sampler_counts_a_busy_process_outside_the_run_as_another_s():
    """A busy loop that is neither a descendant of the run nor marked as its own (its parent shell
    exited, so it was handed to pid 1) is another process's CPU: about half of a 2-CPU machine."""
    import os

    skip_unless_quiet()
    with orphan_busy_loop() as loop:
        assert interference.parse_pid_stat(Path(f"/proc/{loop}/stat").read_text()).ppid != os.getpid()
        with interference.PointSampler([0]) as sampler:
            time.sleep(1.5)
    fig = sampler.figures
    share_of_one_cpu = 100.0 / len(interference.read_proc_stat().per_cpu)
    assert fig is not None and fig.own_cpu_s is not None
    assert 0.3 * share_of_one_cpu < fig.foreign_cpu_pct <= 1.05 * share_of_one_cpu + 5
    # and the point says which process it was
    assert fig.busiest_others[0]["command"] == "sh" and fig.busiest_others[0]["cpu_s"] > 0.3


def test_plans_record_the_rule_and_older_plans_still_resume():
    plan = kitlib.plan("net", environments=["native"])
    assert plan.interference == Rule()
    assert plan.model_dump(mode="json")["interference"]["max_attempts"] == 3
    stricter = kitlib.plan("net", environments=["native"], interference={"max_foreign_cpu_pct": 5})
    assert stricter.run_id != plan.run_id and stricter.seed == plan.seed  # same order, another rule
    older = Plan.model_validate({k: v for k, v in plan.model_dump(mode="json").items() if k != "interference"})
    assert older.interference is None
    assert "interference" not in older.identity()  # its digest is what the kit computed before the rule


def test_ownership_finds_the_tree_the_marked_and_the_run_s_containers(tmp_path):
    """A /proc laid out from captured files: the shell (a child of the run's pid 7275), a process marked
    as the run's, a kernel thread, an LXC container named after the run and two Docker containers."""
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    ours, theirs = "a" * 64, "b" * 64

    def process(pid: int, stat: str, environ: bytes = b"", cgroup: str = "0::/\n") -> None:
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "stat").write_text(read(stat))
        (proc / str(pid) / "environ").write_bytes(environ)
        (proc / str(pid) / "cgroup").write_text(cgroup)

    process(7277, "pid-stat-shell", cgroup=read("pid-cgroup-v1-hybrid"))
    process(17601, "pid-stat-odd-comm", environ=b"PATH=/bin\0KITLIB_OWNER=7275\0")
    process(2, "pid-stat-kthread")
    process(900, "pid-stat-kthread", cgroup="2:cpuacct:/lxc.payload.kit7275x1a2b-lxc\n")
    process(901, "pid-stat-kthread", cgroup=f"2:cpuacct:/docker/{ours}\n")
    process(902, "pid-stat-kthread", cgroup=f"2:cpuacct:/docker/{theirs}\n")
    # a command `docker exec` ran in one of the run's containers, exited before any scan: a zombie, whose
    # cgroup the kernel already reads as the root one (captured so); whose it was cannot be told
    process(903, "pid-stat-zombie", cgroup="2:cpuacct:/\n0::/\n")
    for path in ("lxc.payload.kit7275x1a2b-lxc", f"docker/{ours}", f"docker/{theirs}"):
        (cgroups / "cpuacct" / path).mkdir(parents=True)
        (cgroups / "cpuacct" / path / "cpuacct.usage").write_text(read("cgroup-v1-cpuacct.usage"))
    asked = []

    def is_ours(container_id: str) -> bool:
        asked.append(container_id)
        return container_id == ours

    ownership = interference.Ownership(root_pid=7275, is_own_container=is_ours, proc=proc, cgroup_root=cgroups)
    own, groups = ownership.scan()
    assert own == {(7277, 130199): (7275, 70), (17601, 166284): (17600, 0)}
    assert set(groups) == {"/lxc.payload.kit7275x1a2b-lxc", f"/docker/{ours}"}
    assert ownership.kernel == {(2, 24): 0}  # the kernel's thread creator: neither ours nor another's
    assert ownership.others == {(902, 24)}  # another's container: counted as another process
    assert {pid for pid, _ in ownership.everyone} == {7277, 17601, 900, 901, 902, 903}  # all but the kernel's
    ownership.scan()
    assert sorted(asked) == [ours, theirs]  # each container is asked about once


def test_a_sampler_that_cannot_read_proc_leaves_the_figures_missing(tmp_path):
    with interference.PointSampler([0], interference.Ownership(proc=tmp_path / "no-proc")) as sampler:
        pass
    assert sampler.figures is None and "no-proc" in sampler.error


def test_a_streak_of_points_kept_disturbed_holds_the_next_until_an_undisturbed_one():
    streak, rule = DisturbedStreak(), Rule(weather_after=2)
    for outcome in (True, None, True):  # a failed point (None) is no news either way
        assert not streak.holds(rule)
        streak.update(outcome)
    assert streak.count == 2 and streak.holds(rule) and not streak.holds(Rule(weather_after=None))
    streak.update(False)
    assert streak.count == 0 and not streak.holds(rule)
    assert Rule().weather_after == 3
