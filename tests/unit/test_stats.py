"""kitlib.core.stats against scipy and hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from kitlib.core import stats


def frame(env_values: dict[str, list[float]], unit: str = "req/s") -> pd.DataFrame:
    rows = [
        {"env": env, "metric": "throughput", "unit": unit, "value": v, "clients": 4}
        for env, values in env_values.items()
        for v in values
    ]
    return pd.DataFrame(rows)


def test_summary_by_hand():
    table = stats.summarize(frame({"native": [1.0, 2.0, 3.0, 4.0]}), by=["env"])
    row = table.iloc[0]
    assert (row["n"], row["mean"], row["median"], row["min"], row["max"]) == (4, 2.5, 2.5, 1.0, 4.0)
    assert row["std"] == pytest.approx(np.sqrt(5 / 3))  # sum of squares 5, ddof=1
    half = sp.t.ppf(0.975, 3) * np.sqrt(5 / 3) / 2
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((2.5 - half, 2.5 + half))
    single = stats.summarize(frame({"native": [7.0]}), by=["env"]).iloc[0]
    assert single["n"] == 1 and np.isnan(single["ci_low"])


def test_comparison_matches_scipy():
    rng = np.random.default_rng(1)
    base, other = rng.normal(100, 5, 10), rng.normal(90, 5, 10)
    welch = stats.compare_samples(other, base, "welch")
    logs = sp.ttest_ind(np.log(other), np.log(base), equal_var=False)
    assert welch.p_value == pytest.approx(logs.pvalue)
    assert welch.ratio == pytest.approx(np.exp(np.log(other).mean() - np.log(base).mean()))
    interval = logs.confidence_interval(0.95)
    assert (welch.ci_low, welch.ci_high) == pytest.approx((np.exp(interval.low), np.exp(interval.high)))
    assert welch.verdict == "significant"
    mw = stats.compare_samples(other, base, "mannwhitney")
    assert mw.p_value == pytest.approx(sp.mannwhitneyu(other, base, alternative="two-sided").pvalue)


def test_a_a_comparison_is_not_significant():
    """Native against native: two samples of one distribution must not differ."""
    rng = np.random.default_rng(7)
    draws = rng.normal(100_000, 3_000, 20)
    result = stats.compare_samples(draws[:10], draws[10:])
    assert result.verdict == "not significant"
    assert result.ci_low < 1 < result.ci_high
    df = frame({"native": list(draws[:10]), "native-again": list(draws[10:])})
    table = stats.compare(df, by=["metric"], baseline_env="native")
    assert list(table["verdict"]) == ["not significant"]


def test_interval_and_test_agree_at_small_n():
    """The interval excludes 1 exactly when the test rejects at 5%, at every n from 2 up."""
    rng = np.random.default_rng(3)
    for n in (2, 3, 4, 6):
        for _ in range(50):
            a, b = rng.lognormal(0.05, 0.05, n), rng.lognormal(0, 0.05, n)
            result = stats.compare_samples(a, b)
            assert (result.ci_low > 1 or result.ci_high < 1) == (result.p_value < stats.ALPHA)


def test_not_all_positive_values_fall_back_to_a_difference_interval():
    result = stats.compare_samples([-1.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0])
    diff = sp.ttest_ind([-1.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], equal_var=False).confidence_interval()
    assert result.ratio == pytest.approx(0.5 / 2.5)
    assert (result.ci_low, result.ci_high) == pytest.approx((1 + diff.low / 2.5, 1 + diff.high / 2.5))


def test_not_comparable_is_a_result():
    assert stats.compare_samples([1.0], [1.0, 2.0]).verdict.startswith("not comparable")
    mixed = pd.concat([frame({"native": [1.0, 2.0]}), frame({"docker-host-volume": [1.0, 2.0]}, unit="us")])
    assert stats.compare(mixed, by=["metric"]).iloc[0]["verdict"] == "not comparable: different units"
    assert stats.compare(frame({"kvm": [1.0, 2.0]}), by=["metric"]).iloc[0]["verdict"].startswith("not comparable")


def test_stability_warnings():
    table = stats.summarize(frame({"native": [100.0, 150.0, 60.0], "docker-host-volume": [1.0, 1.0]}), by=["env"])
    notes = stats.stability_warnings(table, by=["env"])
    assert notes[0].startswith("unstable (standard deviation above 10% of the mean")
    assert notes[1].startswith("  env=native: runs vary by ") and notes[1].endswith("% of their mean")
    assert notes[2] == "too few runs for an interval (at least 3 needed):"
    assert notes[3] == "  env=docker-host-volume: 2 run(s)"


def test_stability_warnings_name_the_percentile_and_never_round_to_the_limit():
    rows = frame({"native": [100.0, 110.0, 89.6]})
    rows["metric"], rows["percentile"] = "latency_percentile", 99.0
    table = stats.summarize(rows, by=["env", "metric", "percentile"])
    notes = stats.stability_warnings(table, by=["env", "metric", "percentile"])
    assert len(notes) == 2
    assert notes[1].startswith("  latency_percentile, p99, env=native: runs vary by 10.")
