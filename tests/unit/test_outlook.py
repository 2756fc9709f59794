"""What a budget would likely decide (`kit reproduce --dry-run`): the exact search over each run's cut of
its looks and the outlook read on the sample's real records (the command itself, on a run this host
made: tests/integration/test_until_decided.py)."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pandas as pd
import pytest

import kitlib
from kitlib import outlook
from kitlib.analyse import claims
from kitlib.analyse.claims.core import INCONCLUSIVE, NOT_TESTABLE
from kitlib.results import load_records

from ..support import sample


def test_the_cheapest_cut_of_every_run_is_found_for_each_count_of_claims():
    """Against every combination of one option per run: the fewest seconds for each count, drawn runs of
    four options each (the first free, as a run's profile is)."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        runs = {}
        for run in range(4):
            options = [outlook.Option(1, 0.0, tuple(f"r{run}c{i}" for i in range(rng.integers(0, 3))))]
            for looks in range(2, 5):
                claims_here = tuple(f"r{run}c{i}" for i in range(rng.integers(0, 6)))
                options.append(outlook.Option(looks, float(rng.integers(1, 600)), claims_here))
            runs[f"run{run}"] = options
        found = outlook.cheapest(runs)
        expected: dict[int, float] = {}
        for combination in itertools.product(*runs.values()):
            count = sum(len(o.claims) for o in combination)
            seconds = sum(o.seconds for o in combination)
            expected[count] = min(expected.get(count, np.inf), seconds)
        assert {k: v[0] for k, v in found.items()} == pytest.approx(expected)
        for count, (seconds, picked) in found.items():
            assert sum(len(o.claims) for o in picked.values()) == count
            assert sum(o.seconds for o in picked.values()) == pytest.approx(seconds)


@pytest.fixture
def sample_memory(tmp_path):
    """The sample's main memory run (real records) as this results folder's only earlier run, and a plan of
    the sample's machine over its environments."""
    run = sample.run_with("memory")
    results = tmp_path / "results"
    shutil.copytree(run, results / "memory" / run.name)
    plan = kitlib.plan("memory", environments=["native", "docker-host-volume"], until_decided={})
    return plan.model_copy(update={"host": sample.main_host()}), results


def test_each_cut_of_the_looks_reads_the_claims_at_its_level(sample_memory):
    """The first option is the profile's repetitions at 95%: free, and deciding exactly what the kit's
    claims decide on those records at 95%; each later cut is read at its own level, and costs time only
    where one of its claims needs runs past the profile's."""
    plan, results = sample_memory
    speed = outlook.estimate.rates()
    earlier = outlook.host_records(plan, results)
    options, testable = outlook.options_of(plan, earlier, results, speed)
    assert [o.looks for o in options] == list(range(1, len(plan.until_decided.look_points(3)) + 1))
    records = load_records(results / "memory").assign(ci_alpha=0.05)
    at_95 = claims.evaluate_all(records, experiment="memory").set_index("claim")["status"]
    assert testable == {claim: status for claim, status in at_95.items() if status != NOT_TESTABLE}
    assert options[0].seconds == 0.0
    assert set(options[0].claims) == {c for c, s in testable.items() if s != INCONCLUSIVE}
    for option in options[1:]:
        cut = outlook.with_last_look(plan, plan.until_decided.look_points(3)[option.looks - 1])
        needs = {n.claim: n for n in outlook.needs_at(cut, earlier)}
        assert set(option.claims) == {c for c, n in needs.items() if n.runs is not None}
        grows = any(needs[c].runs > 3 for c in option.claims)
        assert (option.seconds > 0) == grows


def test_the_outlook_names_its_minutes_and_what_no_schedule_decides(sample_memory):
    plan, results = sample_memory
    found = outlook.outlook({"memory": plan}, results, analysis_s=120.0)
    rows = outlook.frontier(found)
    assert rows and rows[0][1] == pytest.approx(found.profile_s / 60.0)
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(rows)), "more claims cost more"
    text = outlook.describe(found, budget_s=45 * 60)
    assert f"{len(found.testable)} claims testable here" in text and "60% of them" in text
    assert f"the budget of 45 min: about {found.decided_within(45 * 60)} of {len(found.testable)}" in text
    never = set(found.testable) - rows[-1][2]
    assert all(claim in text for claim in never)


def test_records_of_another_machine_are_not_this_hosts_noise(sample_memory):
    plan, results = sample_memory
    elsewhere = plan.model_copy(update={"host": "another"})
    assert outlook.outlook({"memory": elsewhere}, results).testable == {}
    assert pd.read_csv(next(results.glob("memory/*/records.csv")))["host"].nunique() == 1
