"""`kit claims` and the analysis read the results folder, one experiment's folder or one run's, and
name a folder that holds no records at any of those levels."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest

from kitlib.analyse import analysis
from kitlib.core import paths
from kitlib.core.errors import KitError

from ..support import sample

SAMPLE = sample.SAMPLE
MEMORY = SAMPLE / "memory"
RUN = sample.run_with("memory", "native")  # the main set's memory run (native and Docker)
LXC_RUN = sample.run_with("memory", "lxc")  # the same machine's LXC and Docker run


def kit_claims(*folders) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "kitlib.cli", "claims", *map(str, folders)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=paths.PROJECT_ROOT)


def rows(done: subprocess.CompletedProcess) -> dict[tuple[str, str], dict[str, str]]:
    assert done.returncode == 0, done.stderr
    return {(r["claim"], r["host"]): r for r in csv.DictReader(io.StringIO(done.stdout))}


def test_each_level_finds_the_runs_below_it():
    assert paths.records_files(RUN) == [RUN / "records.csv"]
    both = sorted([RUN / "records.csv", LXC_RUN / "records.csv"])
    assert paths.records_files(MEMORY) == both
    everything = paths.records_files(SAMPLE)
    assert RUN / "records.csv" in everything and len(everything) == len(list(SAMPLE.glob("*/*/records.csv")))
    assert paths.records_files(SAMPLE, experiment="memory") == both
    assert paths.records_files(RUN, experiment="redis") == []


def test_the_three_levels_load_the_same_records_of_a_run():
    whole = analysis.load([SAMPLE])
    memory = whole[whole["experiment"] == "memory"].reset_index(drop=True)
    run = memory[memory["run_id"] == RUN.name]
    for folder, expected in (
        (MEMORY, memory),
        ("data/sample/memory", memory),
        (RUN, run),
        (f'["data/sample/memory/{RUN.name}"]', run),
    ):
        loaded = analysis.load(folder)
        assert set(loaded["experiment"]) == {"memory"}
        assert len(loaded) == len(expected) and sorted(loaded["value"]) == sorted(expected["value"])


def test_kit_claims_on_the_results_an_experiment_and_a_run_folder():
    """The memory claims decided from data/sample/memory or its main run are those decided from data/sample:
    Docker against native from the run that measured both, whatever other runs the folder holds."""
    root = rows(kit_claims("data/sample"))
    experiment = rows(kit_claims("data/sample/memory"))
    run = rows(kit_claims(RUN.relative_to(paths.PROJECT_ROOT)))
    tested = {key: row for key, row in run.items() if row["verdict"] != "not testable here"}
    assert {claim for claim, _ in tested} >= {"docker_near_native_stream", "docker_near_native_randomaccess"}
    for key, row in tested.items():
        decided = {k: v for k, v in row.items() if k != "reason"}
        for other in (root[key], experiment[key]):
            assert {k: v for k, v in other.items() if k != "reason"} == decided, key
            assert f"run(s) that measured only one of the two left out ({LXC_RUN.name})" in other["reason"], key
    lxc = [key for key, row in experiment.items() if key[0] == "lxc_docker_similar_stream"]
    assert (
        lxc and experiment[lxc[0]]["verdict"] != "not testable here" and run[lxc[0]]["verdict"] == "not testable here"
    )
    testable = [r for r in root.values() if r["verdict"] != "not testable here"]
    assert len(testable) > len(tested) and {r["verdict"] for r in root.values()} > {"inconclusive"}


def test_kit_claims_names_a_folder_without_records(tmp_path):
    (tmp_path / "empty" / "run").mkdir(parents=True)
    done = kit_claims(tmp_path / "empty")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"DIR: '{tmp_path / 'empty'}' holds no records" in done.stderr
    assert "a run's folder (records.csv)" in done.stderr and "<experiment>/<run>/records.csv" in done.stderr
    absent = kit_claims(tmp_path / "absent")
    assert absent.returncode == 2 and f"'{tmp_path / 'absent'}' is not a folder" in absent.stderr


def test_a_folder_too_high_above_the_runs_is_named(tmp_path):
    with pytest.raises(KitError, match="'data' holds no records .* none of: a run's folder"):
        analysis.load("data")
