"""Statistics across runs: summaries, overhead ratios with intervals and tests, empirical CDFs.

Error bars in figures are the standard deviation (as in the paper); intervals are 95%. A
comparison can come out "not significant" or "not comparable" (too few runs, different units):
those are results, not errors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20140721  # fixed, so a rerun of the analysis gives the same intervals


def summarize(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per configuration: n, mean, std (ddof=1), median, min, max, 95% t-interval, coefficient of variation."""
    from scipy import stats

    grouped = df.groupby(by, dropna=False)["value"]
    table = grouped.agg(n="count", mean="mean", std="std", median="median", min="min", max="max").reset_index()
    sem = table["std"] / np.sqrt(table["n"])
    t = stats.t.ppf(1 - ALPHA / 2, (table["n"] - 1).clip(lower=1))
    half = np.where(table["n"] > 1, t * sem, np.nan)
    table["ci_low"], table["ci_high"] = table["mean"] - half, table["mean"] + half
    table["cv"] = table["std"] / table["mean"].abs()
    return table


def stability_warnings(summary: pd.DataFrame, by: list[str], max_cv: float = 0.10) -> list[str]:
    """Configurations too noisy or too thin to trust, in words (pyperf's habit): each names its metric
    (and percentile), the rule is said once at the top, and the variation is shown to a tenth of a percent
    so that it never reads as "10% > 10%"."""
    # the whole configuration, not only `by`: two percentiles of one metric must not read as one line twice
    stat_columns = {"n", "mean", "std", "median", "min", "max", "ci_low", "ci_high", "cv", "unit", "experiment"}
    varying = [c for c in summary.columns if c not in by and c not in stat_columns and summary[c].nunique() > 1]
    columns = list(by) + varying
    first = [c for c in ("metric", "percentile") if c in columns]
    order = first + [c for c in columns if c not in first]
    thin, unstable = [], []
    for _, row in summary.iterrows():
        where = ", ".join(_named(k, row[k]) for k in order if pd.notna(row[k]))
        if row["n"] < 3:
            thin.append(f"  {where}: {int(row['n'])} run(s)")
        elif row["cv"] > max_cv:
            unstable.append(f"  {where}: runs vary by {row['cv']:.1%} of their mean")
    notes = []
    if unstable:
        notes += [f"unstable (standard deviation above {max_cv:.0%} of the mean; more runs or a quieter host help):"]
        notes += list(dict.fromkeys(unstable))
    if thin:
        notes += ["too few runs for an interval (at least 3 needed):"] + list(dict.fromkeys(thin))
    return notes


def _named(column: str, value) -> str:
    if column == "metric":
        return str(value)
    if column == "percentile":
        return f"p{float(value):g}"
    return f"{column}={value:g}" if isinstance(value, float) else f"{column}={value}"


@dataclass(frozen=True)
class Comparison:
    """One environment against the baseline: ratio of means with its interval, and a test."""

    ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    n: int
    n_baseline: int
    verdict: str  # "significant" | "not significant" | "not comparable: …"

    @property
    def significant(self) -> bool:
        return self.verdict == "significant"

    @classmethod
    def not_comparable(cls, reason: str, test: str, n: int, n_baseline: int, ratio: float = float("nan")):
        nan = float("nan")
        return cls(ratio, nan, nan, nan, test, n, n_baseline, f"not comparable: {reason}")


def compare_samples(values, baseline, test: str = "welch") -> Comparison:
    """Ratio mean(values)/mean(baseline); 95% bootstrap interval; Welch's t or Mann–Whitney U."""
    from scipy import stats

    a, b = np.asarray(values, dtype=float), np.asarray(baseline, dtype=float)
    nan = float("nan")
    if len(a) < 2 or len(b) < 2:
        ratio = float(a.mean() / b.mean()) if len(a) and len(b) and b.mean() else nan
        return Comparison.not_comparable("fewer than 2 runs a side", test, len(a), len(b), ratio)
    if b.mean() == 0:
        return Comparison.not_comparable("baseline mean is 0", test, len(a), len(b))
    if test == "welch":
        p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    elif test == "mannwhitney":
        p = float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    else:
        raise ValueError(f"unknown test {test!r}; known: welch, mannwhitney")
    if np.isnan(p):  # both sides constant
        p = 1.0 if a.mean() == b.mean() else 0.0
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    ratios = rng.choice(a, (BOOTSTRAP_RESAMPLES, len(a))).mean(axis=1) / rng.choice(
        b, (BOOTSTRAP_RESAMPLES, len(b))
    ).mean(axis=1)
    low, high = np.percentile(ratios, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
    verdict = "significant" if p < ALPHA else "not significant"
    return Comparison(float(a.mean() / b.mean()), float(low), float(high), p, test, len(a), len(b), verdict)


def compare_ratios(ratios) -> Comparison:
    """Per-point ratios across a sweep: geometric mean, 95% t-interval and a one-sample t-test of the
    log-ratios against 0 (ratio 1). Points pair an environment with its baseline at the same setting."""
    from scipy import stats

    logs = np.log(np.asarray(ratios, dtype=float))
    n = len(logs)
    nan = float("nan")
    if n < 2:
        value = float(np.exp(logs.mean())) if n else nan
        return Comparison(value, nan, nan, nan, "log-ratio t", n, n, "not comparable: fewer than 2 points")
    mean, sem = logs.mean(), logs.std(ddof=1) / np.sqrt(n)
    if sem == 0:
        p = 0.0 if mean != 0 else 1.0
        low = high = float(np.exp(mean))
    else:
        p = float(stats.ttest_1samp(logs, 0.0).pvalue)
        half = stats.t.ppf(1 - ALPHA / 2, n - 1) * sem
        low, high = float(np.exp(mean - half)), float(np.exp(mean + half))
    verdict = "significant" if p < ALPHA else "not significant"
    return Comparison(float(np.exp(mean)), low, high, p, "log-ratio t", n, n, verdict)


def compare(df: pd.DataFrame, by: list[str], baseline_env: str = "native", test: str = "welch") -> pd.DataFrame:
    """Every environment against `baseline_env` within each group of `by` (which must not hold `env`)."""
    rows = []
    for key, group in df.groupby(by, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        base = group[group["env"] == baseline_env]
        for env, other in group[group["env"] != baseline_env].groupby("env"):
            if base.empty:
                result = Comparison.not_comparable(f"no {baseline_env} runs", test, len(other), 0)
            elif set(base["unit"]) != set(other["unit"]):
                result = Comparison.not_comparable("different units", test, len(other), len(base))
            else:
                result = compare_samples(other["value"], base["value"], test)
            rows.append({**dict(zip(by, key, strict=True)), "env": env, "baseline": baseline_env, **result.__dict__})
    return pd.DataFrame(rows)


def ecdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and the fraction of values ≤ each one."""
    x = np.sort(np.asarray(values, dtype=float))
    return x, np.arange(1, len(x) + 1) / len(x)


def cdf_from_percentiles(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """A CDF per group from percentile records (metric *_percentile, column `percentile`), averaged over runs."""
    rows = df[df["metric"].str.endswith("_percentile") & df["percentile"].notna()]
    curve = rows.groupby([*by, "percentile"])["value"].mean().reset_index()
    curve["probability"] = curve["percentile"] / 100.0
    return curve.sort_values([*by, "percentile"]).reset_index(drop=True)
