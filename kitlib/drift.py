"""The drift test: does a metric move with its unit's position in the run?

A machine that changes under a run (a neighbour starts, the CPU warms, a cache fills) shows as a
trend against run position. Each value is divided by the mean of its own configuration (same host,
environment and parameters), so every configuration of a metric in a run can be pooled; the relative
values are then regressed on position. A trend is flagged when it is both significant (p < alpha)
and large (the fitted change over the whole run exceeds `min_change`). With interleaved order the
drift spreads over all environments; with blocked order it would look like an effect of one.
"""

from __future__ import annotations

import pandas as pd

from kitlib import analysis

ALPHA = 0.01
MIN_CHANGE = 0.05
GROUP = ["host", "run_id", "experiment", "workload", "metric"]


def relative_values(df: pd.DataFrame) -> pd.DataFrame:
    """Records with a `position`, plus `relative` = value / mean of its configuration in its run."""
    if "position" not in df.columns:
        return df.iloc[0:0].assign(relative=pd.Series(dtype=float))
    rows = df[df["position"].notna()].copy()
    if rows.empty:
        return rows.assign(relative=pd.Series(dtype=float))
    by = list(dict.fromkeys([*(c for c in analysis.dimensions(rows) if c in rows.columns), "run_id"]))
    means = rows.groupby(by, dropna=False)["value"].transform("mean")
    rows["relative"] = rows["value"] / means.where(means != 0)
    return rows[rows["relative"].notna()]


def drift_table(df: pd.DataFrame, alpha: float = ALPHA, min_change: float = MIN_CHANGE) -> pd.DataFrame:
    """One row per host, run and metric: n (units), the fitted change over the run (relative), p, and `drift`."""
    from scipy import stats

    rows = relative_values(df)
    columns = [*GROUP, "n", "positions", "change", "p_value", "drift"]
    found = []
    group = [c for c in GROUP if c in rows.columns]
    for key, part in rows.groupby(group, dropna=False):
        # one point per unit: the records of one unit (percentiles, phases) share its position and are
        # not independent observations of the machine
        per_unit = part.groupby(part["position"].astype(float))["relative"].mean()
        positions = pd.Series(per_unit.index, dtype=float)
        if len(per_unit) < 6 or per_unit.std() == 0:
            continue
        fit = stats.linregress(positions, per_unit.to_numpy())
        span = positions.max() - positions.min()
        change = fit.slope * span
        found.append(
            {
                **dict(zip(group, key if isinstance(key, tuple) else (key,), strict=True)),
                "n": len(per_unit),
                "positions": f"{int(positions.min())}-{int(positions.max())}",
                "change": change,
                "p_value": fit.pvalue,
                "drift": bool(fit.pvalue < alpha and abs(change) > min_change),
            }
        )
    return pd.DataFrame(found, columns=columns)


def describe(table: pd.DataFrame) -> list[str]:
    """Flagged trends in words, for a notebook or a report."""
    return [
        f"{r['experiment']}/{r['workload']} {r['metric']} on host {r['host']} (run {r['run_id']}): "
        f"{r['change']:+.1%} over positions {r['positions']} (p = {r['p_value']:.2g})"
        for _, r in table[table["drift"]].iterrows()
    ]
