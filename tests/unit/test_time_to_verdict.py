"""The arithmetic of benchmarks/time_to_verdict.py on small frames made here with known answers: the
run-to-run CV of a series, claims decided per hour, the counting of A/A intervals against the equality
band, and the claim shapes it simulates held to the claims' own bands."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import pandas as pd
import pytest

from kitlib.analyse.claims import CLAIMS

BENCH = runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "time_to_verdict.py"))


def records(env: str, threads: int, values: list[list[float]]) -> list[dict]:
    """One record per value; values[r] are the values of repetition r."""
    return [
        {
            "host": "h1",
            "experiment": "cpu",
            "workload": "pxz",
            "env": env,
            "metric": "throughput",
            "unit": "MB/s",
            "threads": threads,
            "value": value,
            "run_id": "quick-1",
            "repetition": r,
        }
        for r, repetition in enumerate(values)
        for value in repetition
    ]


def test_the_cv_is_of_per_repetition_means_and_series_without_noise_are_left_out():
    frame = pd.DataFrame(
        records("native", 1, [[8.0, 10.0], [10.0], [11.0]])  # means 9, 10, 11: CV 1 / 10
        + records("native", 2, [[20.0], [20.0], [20.0]])  # no spread: a constant, not noise
        + records("docker-host-volume", 1, [[-1.0], [2.0], [3.0]])  # a value ≤ 0: not a ratio scale
        + records("docker-host-volume", 2, [[5.0, 6.0]])  # one repetition
    )
    cvs = BENCH["run_to_run_cvs"](frame)
    assert len(cvs) == 1, cvs
    row = cvs.iloc[0]
    assert (row["env"], row["threads"], row["runs"]) == ("native", 1, 3)
    assert row["mean"] == pytest.approx(10.0) and row["cv"] == pytest.approx(0.1)
    noise = BENCH["noise_by_experiment"](cvs).set_index("experiment")
    assert noise.loc["all", "series"] == 1 and noise.loc["cpu", "q50"] == pytest.approx(0.1)


def test_claims_decided_per_hour():
    per_hour = BENCH["decided_per_hour"]
    assert per_hour(1.0, 10, 0.5) == pytest.approx(12.0)  # the paper's 10 runs at half a minute each
    assert per_hour(0.9, 4.5, 0.5) == pytest.approx(24.0)
    assert per_hour(0.0, 3, 0.5) == 0.0


def test_aa_intervals_are_counted_against_the_equality_band():
    table = pd.DataFrame(
        {
            "ci_low": [0.98, 1.01, 1.06, 0.90, math.nan, 0.80],
            "ci_high": [1.02, 1.03, 1.10, 1.10, math.nan, 0.94],
        }
    )
    counts = BENCH["aa_counts"](table)
    assert counts == {"configurations": 6, "excluding 1": 3, "different": 2, "equal": 2, "undecided": 2}


def test_the_simulated_shapes_carry_their_claims_bands():
    listed = {c.name: c.band for c in CLAIMS}
    for shape in BENCH["SHAPES"]:
        assert str(shape.band) == listed[shape.claim]
        assert shape.band.low <= shape.truth <= shape.band.high, "each truth lies inside its band"


def test_the_simulated_noise_is_of_the_series_claims_compare():
    measured = records("native", 1, [[10.0], [10.5], [9.5]]) + records("docker-host-volume", 1, [[10.2], [9.9], [10.4]])
    unread = [
        {**r, "metric": "duration", "unit": "s", "value": v}
        for r, v in zip(measured, [8.0, 8.01, 8.02] * 2, strict=True)
    ]
    frame = pd.DataFrame(measured + unread)
    compared = BENCH["compared_by_claims"](frame)
    assert set(map(tuple, compared.values)) == {
        ("cpu", "throughput", "docker-host-volume", "pxz"),
        ("cpu", "throughput", "native", "pxz"),
    }
    cvs = BENCH["run_to_run_cvs"](frame)
    assert set(cvs["metric"]) == {"throughput", "duration"}
    kept = BENCH["claim_series_cvs"](cvs, frame)
    assert sorted(kept["env"]) == ["docker-host-volume", "native"] and set(kept["metric"]) == {"throughput"}
    assert kept.set_index("env").loc["native", "cv"] == pytest.approx(0.05)
