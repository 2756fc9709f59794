"""The stability warnings every run ends with: coefficient of variation, Tukey's outliers, and what
the interference rule did, counted per point."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse import stability


def frame(values: dict[str, list[float]], **columns) -> pd.DataFrame:
    rows = []
    for env, series in values.items():
        for rep, value in enumerate(series):
            rows.append(
                {
                    "experiment": "cpu",
                    "workload": "linpack",
                    "env": env,
                    "metric": "gflops",
                    "value": value,
                    "unit": "GFLOPS",
                    "run_id": "quick-x",
                    "repetition": rep,
                    "position": rep,
                    **columns,
                }
            )
    return pd.DataFrame(rows)


def test_a_stable_run_says_so():
    records = frame({"native": [50.0, 50.4, 49.8]})
    assert stability.warnings_for(records) == []
    assert stability.report(records).startswith("stability: every series within the rules")


def test_unstable_series_and_outliers_are_named():
    records = frame({"native": [38.6, 58.1, 66.9, 69.5, 74.7, 56.9], "docker": [50.0, 50.2, 50.1, 49.9, 50.0, 80.0]})
    lines = stability.warnings_for(records)
    assert any(line.startswith("unstable") for line in lines)
    assert any("env=native" in line and "runs vary by 21.1% of their mean" in line for line in lines)
    # the Linpack series: 38.6 lies below Q1 - 1.5 IQR = 39.73
    outliers = stability.outliers(records, ["env", "metric"])
    assert outliers[["env", "value"]].values.tolist() == [["docker", 80.0], ["native", 38.6]]
    assert any("env=docker" in line and "80 outside [49.74, 50.44] (n=6)" in line for line in lines)


def test_interference_is_counted_per_point_and_old_records_say_nothing():
    records = frame({"native": [50.0, 50.1, 50.2]})
    assert stability.interference_lines(records) == []
    records["attempt"] = [1, 3, 2]
    records["discarded_attempts"] = [0, 2, 1]
    records["disturbed"] = [False, "True", "False"]  # as a CSV with missing values reads back
    assert stability.interference_lines(records) == [
        "interference: 2 of 3 point(s) measured again (3 disturbed attempt(s) kept in units/*.attempt*.json)",
        "interference: 1 point(s) count although every attempt was disturbed "
        "(`disturbed` column; a quieter host, or `kit check`, helps)",
    ]


def test_long_lists_are_cut_and_counted():
    records = pd.concat([frame({f"env{i}": [10.0]}) for i in range(12)])
    lines = stability.warnings_for(records)
    assert lines[0].startswith("too few runs")
    assert len(lines) == 1 + stability.SHOWN + 1 and lines[-1] == "  … and 4 more"


def test_points_that_count_unsteady_are_counted_per_workload_and_environment():
    records = frame({"native": [50.0, 50.1, 50.2], "docker": [50.0, 50.3, 50.1]})
    assert stability.steadiness_lines(records) == [], "records without the column say nothing"
    records["steady"] = [True, "False", None, False, True, True]  # None: a point the rule does not judge
    records["steady_halfwidth_pct"] = [1.2, 8.97, None, 226.2, 0.4, 1.9]
    assert stability.steadiness_lines(records) == [
        "steady state: 2 of 5 time-bound point(s) count although their sub-intervals missed the rule "
        "(`steady` column; the unit files say why; a profile that lets points grow, or a quieter host, helps):",
        "  linpack docker: 1 of 3, half-width up to 226%",
        "  linpack native: 1 of 2, half-width up to 8.97%",
    ]
    assert stability.steadiness_lines(records.assign(steady=True)) == []
