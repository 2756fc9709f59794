"""Progress seen from outside the kernel: points done / total read from a real run store."""

from __future__ import annotations

import io

from kitlib.measure import experiments
from kitlib.measure.store import RunStore
from kitlib.progress import Watcher, count_done, format_eta, planned_units


def _plan():
    return experiments.get("redis").plan(environments=["native", "docker-host-volume"], profile="quick")


def test_planned_units_cover_every_environment_point_and_repetition():
    plan = _plan()
    keys = planned_units(plan)
    assert len(keys) == len(set(keys))
    per_env = len(keys) // 2
    assert per_env == len([k for k in keys if "__native__" in k]) > 0
    assert {k.rsplit("__", 1)[1] for k in keys} == {f"r{i}" for i in range(plan.repetitions)}


def test_watcher_reports_points_done_failed_and_time_left(tmp_path):
    plan = _plan()
    keys = planned_units(plan)
    store = RunStore(tmp_path / "run")
    store.save_failed(keys[0], "old failure, retried by a rerun", {})
    out = io.StringIO()
    with Watcher("redis (quick)", store.units_dir, keys, every=0.05, stream=out) as watcher:
        assert count_done(store.units_dir, keys, watcher._started) == (0, 0)  # the old failure is to be redone
        store.save_failed(keys[1], "refused", {})
    lines = out.getvalue().splitlines()
    assert lines[0] == f"redis (quick): 0/{len(keys)} points, time left: estimating"
    assert lines[-1].startswith(f"redis (quick): 1/{len(keys)} points, 1 failed, about ")
    assert lines[-1].endswith("left")


def test_time_left_is_said_in_seconds_then_minutes():
    assert format_eta(None) == "time left: estimating"
    assert format_eta(42.4) == "about 42 s left"
    assert format_eta(600) == "about 10 min left"
