"""The results store: atomic files, resume, failures kept apart from valid records."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kitlib.errors import KitError
from kitlib.records import Measurement, Record, place
from kitlib.store import FORMAT_VERSION, RunStore, atomic_write, load_records, unit_key


def _records(value: float, repetition: int):
    return place(
        [Measurement("throughput", value, "req/s", {"op": "mix"})],
        experiment="redis",
        workload="redis",
        env="native",
        run_id="quick-x",
        repetition=repetition,
        params={"clients": 4},
    )


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "a" / "file.json"
    atomic_write(target, "one")
    atomic_write(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_units_resume_and_failures_stay_apart(tmp_path):
    store = RunStore(tmp_path / "redis" / "quick-x")
    store.write_plan({"experiment": "redis"})
    ok, bad = unit_key("native", {"clients": 4}, 0, "redis"), unit_key("native", {"clients": 4}, 1, "redis")
    assert store.unit_status(ok) is None
    store.save_ok(ok, _records(1000.0, 0), {"env": "native"})
    store.save_failed(bad, "redis-benchmark: connection refused", {"env": "native"})
    assert store.unit_status(ok) == "ok" and store.unit_status(bad) == "failed"
    frame = store.consolidate()
    assert list(frame["value"]) == [1000.0]
    assert list(frame.columns[:8]) == [
        "experiment",
        "workload",
        "env",
        "metric",
        "value",
        "unit",
        "run_id",
        "repetition",
    ]
    failures = store.failures()
    assert list(failures["reason"]) == ["redis-benchmark: connection refused"]
    # a later success replaces the failure
    store.save_ok(bad, _records(1100.0, 1), {"env": "native"})
    assert sorted(store.consolidate()["value"]) == [1000.0, 1100.0]
    assert store.failures().empty
    assert not (store.root / "failures.csv").exists()


def test_empty_unit_cannot_be_marked_done(tmp_path):
    with pytest.raises(KitError, match="no records"):
        RunStore(tmp_path).save_ok("k", [], {})


def test_newer_format_is_refused(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"format_version": FORMAT_VERSION + 1, "plan": {}}))
    with pytest.raises(KitError, match="newer kitlib"):
        RunStore(tmp_path).write_plan({})


def test_missing_values_stay_missing():
    with pytest.raises(ValueError, match="NaN"):
        Measurement("throughput", float("nan"), "req/s")
    with pytest.raises(TypeError):
        Measurement("throughput", None, "req/s")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clash"):
        Record("e", "w", "native", "m", 1.0, "u", "r", 0, params={"env": "x"}).as_row()


def test_load_records_across_folders(tmp_path):
    for root, value in ((tmp_path / "one", 1.0), (tmp_path / "two", 2.0)):
        store = RunStore(root / "redis" / "quick-x")
        store.save_ok("k", _records(value, 0), {})
        store.consolidate()
    frame = load_records(tmp_path / "one", tmp_path / "two", experiment="redis")
    assert sorted(frame["value"]) == [1.0, 2.0]
    assert frame["source"].nunique() == 2
    assert isinstance(load_records(tmp_path / "none"), pd.DataFrame)
