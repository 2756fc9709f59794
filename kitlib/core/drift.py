"""The drift test: does a metric move with its unit's position in the run?

A machine that changes under a run (a neighbour starts, the CPU warms, a cache fills) shows as a
trend against run position. Each value is divided by the mean of its own configuration (same host,
environment and parameters), so every configuration of a metric in a run can be pooled; the relative
values are then regressed on position measured from the mean position of the configuration (the
within-configuration slope: in a blocked run every environment sits in a block of its own, and the
blocks' positions say nothing about a trend once each configuration is centred on its mean). A trend
is flagged when it is both significant (p < alpha) and large (the fitted change over the whole run
exceeds `min_change`). With interleaved order the drift spreads over all environments; with blocked
order it would look like an effect of one, which is why a blocked comparison with a trend is not decided.
"""

from __future__ import annotations

import math

import pandas as pd

from kitlib.core.records import BOOKKEEPING_COLUMNS

ALPHA = 0.01
MIN_CHANGE = 0.05
GROUP = ["host", "run_id", "experiment", "workload", "metric"]


def _configuration(rows: pd.DataFrame) -> list[str]:
    """The columns that make a configuration (all but run bookkeeping), and the run."""
    present = rows.notna().any()  # one pass over the frame, not one per column
    found = [c for c in rows.columns if c not in BOOKKEEPING_COLUMNS and present[c]]
    return list(dict.fromkeys([*found, "run_id"] if "run_id" in rows.columns else found))


def relative_values(df: pd.DataFrame) -> pd.DataFrame:
    """Records with a `position`, plus `relative` = value / mean of its configuration in its run and
    `centred` = position − mean position of that configuration."""
    if "position" not in df.columns:
        return df.iloc[0:0].assign(relative=pd.Series(dtype=float), centred=pd.Series(dtype=float))
    rows = df[df["position"].notna()].copy()
    if rows.empty:
        return rows.assign(relative=pd.Series(dtype=float), centred=pd.Series(dtype=float))
    by = _configuration(rows)
    grouped = rows.groupby(by, dropna=False)
    means = grouped["value"].transform("mean")
    rows["relative"] = rows["value"] / means.where(means != 0)
    rows["centred"] = rows["position"].astype(float) - grouped["position"].transform("mean").astype(float)
    rows["configuration"] = grouped.ngroup()
    return rows[rows["relative"].notna()]


def _trend(part: pd.DataFrame) -> dict | None:
    """The within-configuration line through one point per unit: slope, p (t with n − G − 1 degrees of
    freedom, G the kinds of unit), or None when too few units."""
    from scipy import stats

    # one point per unit: the records of one unit (percentiles, phases, kernels) share its position and
    # are not independent observations of the machine
    units = part.groupby(part["position"].astype(float)).agg(
        relative=("relative", "mean"),
        centred=("centred", "mean"),
        kind=("configuration", lambda s: tuple(sorted(set(s)))),
    )
    kinds = units["kind"].nunique()
    df = len(units) - kinds - 1
    if len(units) < 6 or df < 1 or units["relative"].std() == 0:
        return None
    x = units["centred"].to_numpy(float)
    y = units["relative"].to_numpy(float) - units.groupby("kind")["relative"].transform("mean").to_numpy(float)
    sxx = float(((x - x.mean()) ** 2).sum())
    if sxx == 0:
        return None
    slope = float(((x - x.mean()) * y).sum() / sxx)
    residual = y - slope * (x - x.mean())
    se = math.sqrt(float((residual**2).sum()) / df / sxx)
    p = 0.0 if se == 0 else float(2 * stats.t.sf(abs(slope) / se, df))
    positions = units.index.to_numpy(float)
    half = float(stats.t.ppf(1 - 0.05 / 2, df)) * se
    return {
        "n": len(units),
        "positions": (positions.min(), positions.max()),
        "slope": slope,
        "p_value": p,
        "half": half,
    }


def drift_table(df: pd.DataFrame, alpha: float = ALPHA, min_change: float = MIN_CHANGE) -> pd.DataFrame:
    """One row per host, run and metric: n (units), the fitted change over the run (relative), p, and `drift`."""
    rows = relative_values(df)
    columns = [*GROUP, "n", "positions", "change", "p_value", "change_half", "drift"]
    found = []
    group = [c for c in GROUP if c in rows.columns]
    for key, part in rows.groupby(group, dropna=False):
        fit = _trend(part)
        if fit is None:
            continue
        low, high = fit["positions"]
        change = fit["slope"] * (high - low)
        found.append(
            {
                **dict(zip(group, key if isinstance(key, tuple) else (key,), strict=True)),
                "n": fit["n"],
                "positions": f"{int(low)}-{int(high)}",
                "change": change,
                "p_value": fit["p_value"],
                "change_half": fit["half"] * (high - low),
                "drift": bool(fit["p_value"] < alpha and abs(change) > min_change),
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


def flagged(rows: pd.DataFrame) -> list[str]:
    """The trends the drift test flags in these records, in words (empty where it finds none or cannot
    look): what a comparison resting on them must say."""
    if rows.empty or "position" not in rows.columns:
        return []
    return [
        f"{r['workload']} {r['metric']}: {r['change']:+.1%} over positions {r['positions']} (p = {r['p_value']:.2g})"
        for _, r in drift_table(rows).pipe(lambda t: t[t["drift"]]).iterrows()
    ]


def unbounded(rows: pd.DataFrame, min_change: float = MIN_CHANGE) -> list[str]:
    """Why the drift test cannot clear these records of a trend, in words (empty when it can): a trend
    found, or one of more than `min_change` over the run that its 95% interval cannot exclude, or too
    few units to look. A blocked run needs this clearance, since its drift reads as an effect."""
    if rows.empty or "position" not in rows.columns or rows["position"].isna().any():
        return ["no positions recorded"]
    table = drift_table(rows)
    if table.empty:
        return ["too few units to test"]
    found = []
    for _, r in table.iterrows():
        reach = abs(r["change"]) + r["change_half"]
        if r["drift"]:
            found.append(f"a trend of {r['change']:+.1%} over positions {r['positions']} (p = {r['p_value']:.2g})")
        elif reach > min_change:
            found.append(
                f"a trend of up to ±{reach:.0%} over positions {r['positions']} cannot be excluded "
                f"(fitted {r['change']:+.1%})"
            )
    return found
