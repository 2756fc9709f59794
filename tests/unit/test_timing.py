"""The reproduce's time table, on units a real quick Redis run wrote (tests/data/timing: three of its units,
one per environment, kept as the store wrote them)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from kitlib.core import timing
from kitlib.measure.run.runner import tool_seconds

RUN = Path(__file__).parents[1] / "data" / "timing" / "redis-quick"


def units() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((RUN / "units").glob("*.json"))]


def test_each_unit_tool_time_is_its_commands_time_within_its_wall_time():
    for unit in units():
        summed = sum(c["seconds"] for c in unit["commands"])
        assert unit["tool_seconds"] == pytest.approx(min(unit["seconds"], summed), abs=0.002)
        assert 0 < unit["tool_seconds"] <= unit["seconds"]
        assert tool_seconds(unit["commands"], unit["seconds"]) == pytest.approx(unit["tool_seconds"], abs=0.002)


def test_store_tool_time_sums_the_done_units_and_counts_only_those_finished_since():
    total, count = timing.store_tool_time(RUN)
    assert count == 3
    assert total == pytest.approx(sum(u["tool_seconds"] for u in units()))
    latest = max(u["finished"] for u in units())
    late_total, late_count = timing.store_tool_time(RUN, since=latest)
    assert late_count == 1
    assert late_total == pytest.approx(next(u["tool_seconds"] for u in units() if u["finished"] == latest))


def test_a_unit_written_before_tool_seconds_existed_counts_its_wall_time(tmp_path):
    (tmp_path / "units").mkdir()
    unit = units()[0]
    del unit["tool_seconds"]
    (tmp_path / "units" / "old.json").write_text(json.dumps(unit))
    assert timing.store_tool_time(tmp_path) == (pytest.approx(unit["seconds"]), 1)


def test_table_and_csv_split_wall_time_into_tool_and_harness(tmp_path):
    tool, count = timing.store_tool_time(RUN)
    wall = max(u["finished"] for u in units())  # the run's span, from the units' own clock
    span = (_seconds(wall) - _seconds(min(u["started"] for u in units()))) + 1
    steps = [timing.StepTime("redis", span, tool, count), timing.StepTime("analysis: claims", 5.0)]
    text = timing.table(steps)
    assert "| redis |" in text and "| total |" in text and "analysis: claims" in text
    assert steps[0].harness_s == pytest.approx(span - tool)
    rows = list(csv.DictReader(timing.write_csv(steps, tmp_path / "timing.csv").open()))
    assert [r["step"] for r in rows] == ["redis", "analysis: claims", "total"]
    assert float(rows[-1]["tool_s"]) == pytest.approx(tool, abs=0.001)
    assert float(rows[-1]["wall_s"]) == pytest.approx(span + 5.0, abs=0.001)
    assert rows[1]["harness_over_tool"] == ""  # no tool time: no ratio


def _seconds(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


def test_a_unit_measured_through_an_api_counts_its_wall_time_as_tool_time():
    assert tool_seconds([], 0.29) == 0.29
    assert tool_seconds([{"argv": ["docker", "start"], "service": "x"}], 0.5) == 0.5


def test_the_harness_is_itemised_from_the_run_s_files(tmp_path):
    """Probes from the kept units, the attempts measured again (a duet's two sides once), the environments'
    starts, preparations and stops from provenance; the rest is what the files do not account for."""
    import json

    units = tmp_path / "units"
    units.mkdir()
    kept = {"status": "ok", "records": [{}], "seconds": 10.0, "tool_seconds": 8.0, "probe_seconds": 1.5}
    (units / "a.json").write_text(json.dumps(kept))
    (units / "a.attempt1.json").write_text(json.dumps({"status": "attempt", "seconds": 9.0}))
    side = {"status": "attempt", "seconds": 4.0, "duet": "r0~x", "workload": "w", "point": {}}
    (units / "b.attempt1.json").write_text(json.dumps(side))
    (units / "c.attempt1.json").write_text(json.dumps({**side, "seconds": 5.0}))
    environments = [{"env": "native", "start_s": 0.5, "prepare_s": 2.0, "stop_s": 0.25}]
    (tmp_path / "provenance.json").write_text(json.dumps({"sessions": [{"environment_seconds": environments}]}))
    parts = timing.store_parts(tmp_path)
    assert parts == timing.Parts(probes_s=1.5, remeasured_s=14.0, environments_s=2.75)
    step = timing.StepTime("cpu", 40.0, 8.0, 1, None, parts)
    assert step.rest_s == pytest.approx(40.0 - 8.0 - 1.5 - 14.0 - 2.75)
    assert "| cpu | 40 | 8 | 32 | 400% | 2 | 14 | 3 | 14 | 1 |  |" in timing.table([step])
