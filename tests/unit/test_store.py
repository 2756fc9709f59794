"""The results store: atomic files, resume, failures kept apart from valid records."""

from __future__ import annotations

import json
import os
import time

import pandas as pd
import pytest

from kitlib import progress
from kitlib.core.errors import KitError, RecordError
from kitlib.core.records import Measurement, Record, place
from kitlib.measure import cleanup
from kitlib.measure.store import FORMAT_VERSION, RESULT_FILE_MODE, TEMP_GRACE_S, RunStore, atomic_write, unit_key
from kitlib.results import load_records


def _records(value: float, repetition: int, run_id: str = "quick-x"):
    return place(
        [Measurement("throughput", value, "req/s", {"op": "mix"})],
        experiment="redis",
        workload="redis",
        env="native",
        run_id=run_id,
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
    for root, value, run in ((tmp_path / "one", 1.0, "quick-x"), (tmp_path / "two", 2.0, "quick-y")):
        store = RunStore(root / "redis" / run)
        store.save_ok("k", _records(value, 0, run), {})
        store.consolidate()
    frame = load_records(tmp_path / "one", tmp_path / "two", experiment="redis")
    assert sorted(frame["value"]) == [1.0, 2.0]
    assert frame["source"].nunique() == 2
    assert isinstance(load_records(tmp_path / "none"), pd.DataFrame)


def test_a_measurement_is_a_finite_number_or_the_kits_error():
    for bad in (float("nan"), float("inf"), -float("inf"), "12", None, True):
        with pytest.raises(RecordError, match="throughput"):
            Measurement("throughput", bad, "req/s")  # type: ignore[arg-type]
    with pytest.raises(RecordError, match="NaN"):
        Record("e", "w", "native", "m", float("nan"), "u", "r", 0)


def test_a_commit_is_fsynced_file_then_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "new" / "units" / "k.json"
    atomic_write(target, "{}")
    assert synced[0].startswith(str(target.parent / ".k.json.")), "the data before the rename"
    assert synced[1:] == [str(target.parent), str(target.parent.parent), str(tmp_path)], synced
    assert target.read_text() == "{}" and oct(target.stat().st_mode & 0o777) == oct(RESULT_FILE_MODE)


def test_a_written_file_has_its_mode_whatever_the_umask_and_the_umask_is_left_alone(tmp_path):
    """The mode is set on the file: the process umask, shared by every thread, is never changed."""
    old = os.umask(0o077)
    try:
        atomic_write(tmp_path / "a.json", "{}")
        assert os.umask(0o027) == 0o077, "atomic_write left the umask as it was"
        atomic_write(tmp_path / "b.json", "{}")
        assert os.umask(0o077) == 0o027
    finally:
        os.umask(old)
    assert {oct(p.stat().st_mode & 0o777) for p in tmp_path.iterdir()} == {oct(0o644)}


def test_kit_clean_removes_a_killed_writers_temp_files_only(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RESULTS", str(tmp_path))
    dead = RunStore(tmp_path / "redis" / "quick-dead")
    live = RunStore(tmp_path / "redis" / "quick-live")
    old = time.time() - 2 * TEMP_GRACE_S
    left = []
    for store in (dead, live):
        atomic_write(store.root / "records.csv", "x\n")
        for name in (".records.csv.k3j_x9a2", "units/.k.json.abcdefgh"):
            (store.root / name).parent.mkdir(exist_ok=True)
            (store.root / name).write_text("half")
            os.utime(store.root / name, (old, old))
            left.append(store.root / name)
    fresh = dead.root / ".plan.json.zzzzzzzz"
    fresh.write_text("being written")
    keep = [dead.root / ".lock", dead.root / ".hidden-note"]
    for path in keep:
        path.write_text("")
        os.utime(path, (old, old))
    with live.locked():
        removed = cleanup.clean_temp_files()
    assert sorted(removed) == sorted(f"temp file {p}" for p in left[:2]), removed
    assert all(p.exists() for p in [*left[2:], fresh, *keep, dead.root / "records.csv"])
    assert cleanup.clean_temp_files() == [f"temp file {p}" for p in sorted(left[2:])], "once the run has ended"


def test_a_unit_is_done_only_with_its_records(tmp_path):
    store = RunStore(tmp_path)
    store.units_dir.mkdir(parents=True)
    for key, document in {"bare": {"status": "ok"}, "empty": {"status": "ok", "records": []}}.items():
        (store.units_dir / f"{key}.json").write_text(json.dumps(document))
        assert store.unit_status(key) is None, key
    store.save_ok("done", _records(5.0, 0), {})
    assert store.unit_status("done") == "ok"
    assert progress.count_done(store.units_dir, ["bare", "empty", "done"], since=0.0) == (1, 0)
    assert list(store.consolidate()["value"]) == [5.0]


def test_a_corrupt_unit_file_is_the_kits_error_naming_it(tmp_path):
    store = RunStore(tmp_path)
    store.save_ok("cut", _records(5.0, 0), {})
    path = store.units_dir / "cut.json"
    path.write_text(path.read_text()[:40])
    for call in (lambda: store.unit_status("cut"), store.consolidate):
        with pytest.raises(KitError, match=rf"{path}: not valid JSON"):
            call()
    path.write_text("[1, 2]")
    with pytest.raises(KitError, match="holds list, not the JSON object"):
        store.unit_status("cut")


def test_a_done_unit_reopened_becomes_its_next_attempt_with_its_raw_output(tmp_path):
    store = RunStore(tmp_path / "redis" / "quick-x")
    store.write_plan({"experiment": "redis"})
    key = unit_key("native", {"clients": 4}, 0, "redis")
    store.save_attempt(key, 1, "disturbed: steal 5.0% > 2%", _records(900.0, 0), {"env": "native"})
    raw = store.save_raw(key, {"redis-benchmark": "GET: 1000.00 requests per second"})
    store.save_ok(key, _records(1000.0, 0), {"env": "native", "raw_files": raw})
    assert [a["attempt"] for a in store.attempts_of(key)] == [1]

    moved = store.reopen(key, "judged at the run's end: machine at 57% of its usual capacity < 90%")

    assert moved == f"units/{key}.attempt2.json"
    assert store.unit_status(key) is None  # measured again by the next run_plan
    assert store.consolidate().empty  # a discarded attempt is never part of records.csv
    attempts = store.attempts_of(key)
    assert [(a["attempt"], a["file"]) for a in attempts] == [(1, f"units/{key}.attempt1.json"), (2, moved)]
    assert attempts[1]["reason"].startswith("judged at the run's end")
    kept = json.loads((store.root / moved).read_text())
    assert kept["status"] == "discarded" and kept["records"][0]["value"] == 1000.0
    assert kept["raw_files"] == [f"raw/{key}.attempt2.redis-benchmark.txt"]
    assert (store.root / kept["raw_files"][0]).read_text() == "GET: 1000.00 requests per second"
    assert not (store.root / raw[0]).exists()  # the next attempt's output takes the unit's own name
    store.save_failed(key, "refused", {"env": "native"})
    with pytest.raises(KitError, match="only a measured unit"):
        store.reopen(key, "again")
