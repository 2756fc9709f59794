"""Repetitions added until decided, with the real programs and the real engine: a memory run on native and
Docker that may grow, a step to its next look at a time, within a budget, through the notebook as a
JupyterLab user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from kitlib.core import paths, sequential
from kitlib.measure.store import RunStore
from kitlib.notebooks import execute

from ..conftest import leftovers

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def test_a_run_grows_only_by_what_its_claims_need_and_keeps_their_level(
    docker_client, root_netns, bench_image, isolated_dirs
):
    results, figures = isolated_dirs
    execute(
        paths.notebooks_root() / "experiments" / "memory.ipynb",
        results / "memory.ipynb",
        {
            "results_dir": str(results),
            "figures_dir": str(figures),
            "tables_dir": str(results / "tables"),
            "until_decided": True,
            "budget": "4m",
            "llc_multiple": 0.25,
            "gups_min_table_mb": 64,
        },
    )
    run_dir = next(results.glob("memory/*/"))
    plan = json.loads((run_dir / "plan.json").read_text())["plan"]
    last = plan["until_decided"]["max_repetitions"]
    assert last in sequential.Stopping().look_points(3) and plan["repetitions"] == 3, "cut at a look of the schedule"
    records = pd.read_csv(run_dir / "records.csv")
    looks = sequential.Stopping(max_repetitions=last).looks(3)
    assert np.allclose(records["ci_alpha"], 0.05 / looks), "every record carries the looks' level"
    added = RunStore(run_dir).extensions()
    for extension in added:  # each added repetition ran exactly what it was added for
        rows = records[records["repetition"] == extension["repetition"]]
        assert set(rows["env"]) == set(extension["environments"]) and extension["why"]
        assert set(rows["workload"]) == set(extension["workloads"])
    assert records["repetition"].max() == 2 + len(added)
    reached = 3 + len(added)
    assert reached in sequential.Stopping(max_repetitions=last).look_points(3), f"stopped between two looks: {reached}"
    units = records.drop_duplicates(["env", "workload", "repetition", "position"])
    assert units["position"].is_unique, "every point has its own place in the run's order"
    notebook = (results / "memory.ipynb").read_text()
    assert "for a budget of 4 min" in notebook, "the notebook says the looks its budget affords"
    assert sequential.level_text(0.05 / looks) in notebook or "not testable" in notebook
    assert leftovers(docker_client) == []
    a_dry_reproduce_reads_this_run(results, figures)


def a_dry_reproduce_reads_this_run(results, figures) -> None:
    """`kit reproduce --dry-run` on the results of that run, this host's: it reads the run's claims and
    prices their looks, and measures and writes nothing."""
    before = sorted(str(p) for p in results.rglob("*"))
    env = {**os.environ, "KIT_RESULTS": str(results), "KIT_FIGURES": str(figures)}
    argv = [sys.executable, "-m", "kitlib.cli", "reproduce", "--dry-run", "--experiment", "memory"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "claims testable here, read on the earlier runs of this host in 1 folder;" in done.stdout, done.stdout
    assert "60% of them" in done.stdout and "the budget of 45 min: about" in done.stdout
    assert sorted(str(p) for p in results.rglob("*")) == before, "a dry run writes nothing"
