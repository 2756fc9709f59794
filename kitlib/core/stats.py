"""Statistics across runs: summaries, overhead ratios with intervals and tests, empirical CDFs.

A ratio's interval and its test come from one model (Welch's t on logarithms), so they never disagree.

Error bars in figures are the standard deviation (as in the paper); intervals are 95%. A
comparison can come out "not significant" or "not comparable" (too few runs, different units):
those are results, not errors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kitlib.core import tool_versions

ALPHA = 0.05


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


def log_ratio_interval(values, baseline, alpha: float = ALPHA) -> tuple[float, float, float, float, float]:
    """Ratio of geometric means with its 1 − alpha (95%) interval and Welch's p, all from one model: Welch's
    t on the logarithms. (ratio, low, high, p, degrees of freedom); at small n a bootstrap interval would be
    too narrow and disagree with the test, this one cannot."""
    from scipy import stats

    la, lb = np.log(np.asarray(values, dtype=float)), np.log(np.asarray(baseline, dtype=float))
    return _welch(la, lb, stats, transform=np.exp, alpha=alpha)


def difference_interval(values, baseline, alpha: float = ALPHA) -> tuple[float, float, float, float, float]:
    """Difference of means with its 1 − alpha (95%) Welch interval and Welch's p: (difference, low, high, p, df)."""
    from scipy import stats

    a, b = np.asarray(values, dtype=float), np.asarray(baseline, dtype=float)
    return _welch(a, b, stats, transform=float, alpha=alpha)


def _welch(
    a: np.ndarray, b: np.ndarray, stats, transform, alpha: float = ALPHA
) -> tuple[float, float, float, float, float]:
    """Welch's t: (difference, low, high, p, df), df the Welch–Satterthwaite degrees of freedom as the
    interval used them (not rounded: `claims.core.repetitions_to_decide` reads the spread back with them)."""
    diff = float(a.mean() - b.mean())
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = float(np.sqrt(va + vb))
    if se == 0:
        p = 1.0 if diff == 0 else 0.0
        return transform(diff), transform(diff), transform(diff), p, len(a) + len(b) - 2
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = float(stats.t.ppf(1 - alpha / 2, df)) * se
    p = float(2 * stats.t.sf(abs(diff) / se, df))
    return transform(diff), transform(diff - half), transform(diff + half), p, float(df)


def welch_log_intervals(values: np.ndarray, baseline: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`log_ratio_interval` for many draws at once (rows of two 2-D arrays): ratios, lows, highs."""
    from scipy import stats

    la, lb = np.log(values), np.log(baseline)
    na, nb = la.shape[-1], lb.shape[-1]
    diff = la.mean(axis=-1) - lb.mean(axis=-1)
    va, vb = la.var(axis=-1, ddof=1) / na, lb.var(axis=-1, ddof=1) / nb
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = stats.t.ppf(1 - ALPHA / 2, df) * np.sqrt(va + vb)
    return np.exp(diff), np.exp(diff - half), np.exp(diff + half)


def compare_samples(values, baseline, test: str = "welch") -> Comparison:
    """Ratio of values to baseline with its 95% interval and a test that agree: Welch's t on the
    logarithms gives both (the ratio is then of geometric means). With `test="mannwhitney"` the p-value
    is Mann–Whitney U's; the interval stays Welch's. Values not all positive: ratio of means, interval
    of the Welch difference divided by the baseline mean."""
    from scipy import stats

    a, b = np.asarray(values, dtype=float), np.asarray(baseline, dtype=float)
    nan = float("nan")
    if test not in ("welch", "mannwhitney"):
        raise ValueError(f"unknown test {test!r}; known: welch, mannwhitney")
    if len(a) < 2 or len(b) < 2:
        ratio = float(a.mean() / b.mean()) if len(a) and len(b) and b.mean() else nan
        return Comparison.not_comparable("fewer than 2 runs a side", test, len(a), len(b), ratio)
    if b.mean() == 0:
        return Comparison.not_comparable("baseline mean is 0", test, len(a), len(b))
    if (a > 0).all() and (b > 0).all():
        ratio, low, high, p, _ = log_ratio_interval(a, b)
    else:
        diff, dlow, dhigh, p, _ = difference_interval(a, b)
        ratio, low, high = 1 + diff / b.mean(), 1 + dlow / b.mean(), 1 + dhigh / b.mean()
    if test == "mannwhitney":
        p = float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    verdict = "significant" if p < ALPHA else "not significant"
    return Comparison(float(ratio), float(low), float(high), float(p), test, len(a), len(b), verdict)


def compare(
    df: pd.DataFrame,
    by: list[str],
    baseline_env: str = "native",
    test: str = "welch",
    allow_mixed_versions: bool = False,
) -> pd.DataFrame:
    """Every environment against `baseline_env` within each group of `by` (which must not hold `env`).
    Where records name their tools' versions, a `tool_versions` column names those that differ between
    the two sides, and a side pooling runs of differing versions is not compared unless
    `allow_mixed_versions` (`kitlib.core.tool_versions`)."""
    rows = []
    named = tool_versions.COLUMN in df.columns
    for key, group in df.groupby(by, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        base = group[group["env"] == baseline_env]
        for env, other in group[group["env"] != baseline_env].groupby("env"):
            both = pd.concat([other, base])
            pooled = tool_versions.mixed(both, ["env"]) if named else []
            if base.empty:
                result = Comparison.not_comparable(f"no {baseline_env} runs", test, len(other), 0)
            elif set(base["unit"]) != set(other["unit"]):
                result = Comparison.not_comparable("different units", test, len(other), len(base))
            elif pooled and not allow_mixed_versions:
                reason = f"pools runs of differing tool versions ({'; '.join(pooled)})"
                result = Comparison.not_comparable(reason, test, len(other), len(base))
            else:
                result = compare_samples(other["value"], base["value"], test)
            row = {**dict(zip(by, key, strict=True)), "env": env, "baseline": baseline_env, **result.__dict__}
            if named:
                row[tool_versions.COLUMN] = "; ".join(tool_versions.between(both) + pooled) or None
            rows.append(row)
    return pd.DataFrame(rows)


def paired_log_interval(values, baseline) -> tuple[float, float, float, float, int]:
    """Ratio from pairs (one value a side per block, e.g. a repetition of an interleaved run): the mean
    of the log ratios within a pair, its 95% t interval and p with n − 1 degrees of freedom:
    (ratio, low, high, p, df). Shared variation of a block (the machine's drift) cancels in each pair."""
    return _paired(np.log(np.asarray(values, dtype=float)) - np.log(np.asarray(baseline, dtype=float)), np.exp)


def paired_difference_interval(values, baseline, alpha: float = ALPHA) -> tuple[float, float, float, float, int]:
    """The paired analysis of a difference: mean difference within pairs, its 1 − alpha t interval, p, df."""
    return _paired(np.asarray(values, dtype=float) - np.asarray(baseline, dtype=float), float, alpha)


def _paired(d: np.ndarray, transform, alpha: float = ALPHA) -> tuple[float, float, float, float, int]:
    from scipy import stats

    mean, df = float(d.mean()), len(d) - 1
    se = float(d.std(ddof=1) / np.sqrt(len(d)))
    if se == 0:
        return transform(mean), transform(mean), transform(mean), 1.0 if mean == 0 else 0.0, df
    half = float(stats.t.ppf(1 - alpha / 2, df)) * se
    p = float(2 * stats.t.sf(abs(mean) / se, df))
    return transform(mean), transform(mean - half), transform(mean + half), p, df


def paired_log_intervals(values: np.ndarray, baseline: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`paired_log_interval` for many draws at once (rows of two 2-D arrays, columns the pairs)."""
    from scipy import stats

    d = np.log(values) - np.log(baseline)
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    half = stats.t.ppf(1 - ALPHA / 2, n - 1) * d.std(axis=-1, ddof=1) / np.sqrt(n)
    return np.exp(mean), np.exp(mean - half), np.exp(mean + half)


def runs_for_power(
    sd: float, distance: float, power: float = 0.8, paired: bool = False, cap: int = 1000, alpha: float = ALPHA
) -> int:
    """Runs a side for which an interval of half-width t(1 − alpha/2, df) × se clears `distance` with
    probability `power`: the smallest N with (t(1 − alpha/2, df) + t(power, df)) × se(N) ≤ distance, where
    se(N) = sd × √(2/N) and df = 2N − 2 for two samples of one spread `sd` a side (Welch), or se(N) =
    sd / √N and df = N − 1 for pairs whose differences spread by `sd`. The t quantiles are taken at that
    N (found by search), not the normal ones, which at small N would promise too few runs. Returns
    cap + 1 when even `cap` runs would not do."""
    from scipy import stats

    if not (sd > 0 and distance > 0):
        return 2 if sd == 0 else cap + 1

    def enough(n: int) -> bool:
        df = n - 1 if paired else 2 * n - 2
        se = sd / np.sqrt(n) if paired else sd * np.sqrt(2 / n)
        return (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * se <= distance

    if not enough(cap):
        return cap + 1
    low, high = 2, cap  # enough(high) holds; the left side grows with n, so search the first that holds
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low
