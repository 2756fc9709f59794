"""Per-series stability warnings at the end of every run, as pyperf prints them: which series vary
too much to trust, which runs lie outside the rest, and what the interference rule did.

A series is one configuration on one host (every column that is not run bookkeeping, see
`kitlib.analyse.analysis.dimensions`), its runs the repetitions. The rules, stated in every report:
- unstable: standard deviation above MAX_CV of the mean (pyperf warns at 10% too);
- outlier: a run outside Tukey's fences, below Q1 - 1.5 IQR or above Q3 + 1.5 IQR of its series,
  judged only in series of MIN_RUNS_FOR_OUTLIERS runs or more (three values have no quartiles to speak of);
- interference: points measured again because they were disturbed, and points that count although
  every attempt was disturbed (the `attempt`, `discarded_attempts` and `disturbed` columns);
- steady state: time-bound points that count although their sub-intervals missed the steady-state
  rule (the `steady` column, `kitlib.core.steady`), by workload and environment.
"""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.analysis import dimensions
from kitlib.core import stats
from kitlib.core.records import flag_is, one_per_point

MAX_CV = 0.10
FENCE = 1.5
MIN_RUNS_FOR_OUTLIERS = 4
#: lines shown per kind of warning; the rest are counted (records and `kit claims` have them all)
SHOWN = 8


def outliers(records: pd.DataFrame, by: list[str], fence: float = FENCE) -> pd.DataFrame:
    """The runs outside Tukey's fences of their series: its columns, value, and the fences."""
    rows = []
    for key, group in records.groupby(by, dropna=False):
        values = group["value"].astype(float)
        if len(values) < MIN_RUNS_FOR_OUTLIERS:
            continue
        q1, q3 = values.quantile(0.25), values.quantile(0.75)
        low, high = q1 - fence * (q3 - q1), q3 + fence * (q3 - q1)
        for index in group.index[(values < low) | (values > high)]:
            row = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            rows.append({**row, "value": records.at[index, "value"], "low": low, "high": high, "n": len(values)})
    return pd.DataFrame(rows)


#: columns that describe how a series was measured, the same for every series of one workload: left out of
#: the names the warnings give (the records keep them)
DESCRIPTIVE = ("unit", "method", "benchmark", "program_source", "tool")


def warnings_for(records: pd.DataFrame, max_cv: float = MAX_CV) -> list[str]:
    """The report's lines, empty when every series is stable, has no outlier and no point was disturbed."""
    if records is None or records.empty or "value" not in records.columns:
        return []
    by = dimensions(records)
    summary = stats.summarize(records, by=by)
    # a series is named by what tells it from the others, not by every column all of them share
    shown = [
        c
        for c in by
        if c not in DESCRIPTIVE and (c in ("metric", "env", "percentile") or summary[c].nunique(dropna=True) > 1)
    ]
    named = summary.drop(columns=[c for c in DESCRIPTIVE if c in summary.columns])
    lines = _capped(stats.stability_warnings(named, by=shown, max_cv=max_cv))
    found = outliers(records, by)
    if not found.empty:
        first = [c for c in ("metric", "percentile") if c in shown]
        order = first + [c for c in shown if c not in first]
        lines.append(
            f"outliers (outside Q1 - {FENCE:g} IQR, Q3 + {FENCE:g} IQR of their series, "
            f"in series of {MIN_RUNS_FOR_OUTLIERS} runs or more):"
        )
        named = []
        for _, row in found.iterrows():
            where = ", ".join(stats._named(k, row[k]) for k in order if k in row and pd.notna(row[k]))
            named.append(f"  {where}: {row['value']:g} outside [{row['low']:.4g}, {row['high']:.4g}] (n={row['n']})")
        lines += _capped(named)
    lines += interference_lines(records)
    lines += steadiness_lines(records)
    return lines


def steadiness_lines(records: pd.DataFrame) -> list[str]:
    """The time-bound points that count unsteady, per workload and environment; nothing for records
    without the `steady` column or whose points all met the rule."""
    if "steady" not in records.columns:
        return []
    points = one_per_point(records)
    judged = points[points["steady"].notna()]
    unsteady = judged[flag_is(judged["steady"], False)]
    if unsteady.empty:
        return []
    lines = [
        f"steady state: {len(unsteady)} of {len(judged)} time-bound point(s) count although their "
        "sub-intervals missed the rule (`steady` column; the unit files say why; a profile that lets "
        "points grow, or a quieter host, helps):"
    ]
    where = [c for c in ("workload", "env") if c in unsteady.columns]
    totals = judged.groupby(where, dropna=False).size()
    for key, group in unsteady.groupby(where, dropna=False):
        widths = pd.to_numeric(group.get("steady_halfwidth_pct"), errors="coerce").dropna()
        width = f", half-width up to {widths.max():.3g}%" if len(widths) else ""
        named = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        lines.append(f"  {named}: {len(group)} of {totals[key]}{width}")
    return _capped(lines)


def _capped(lines: list[str]) -> list[str]:
    """At most SHOWN indented lines under each heading, the rest counted."""
    out: list[str] = []
    under = 0
    for line in [*lines, ""]:
        if line.startswith("  "):
            under += 1
            if under <= SHOWN:
                out.append(line)
            continue
        if under > SHOWN:
            out.append(f"  … and {under - SHOWN} more")
        under = 0
        if line:
            out.append(line)
    return out


def interference_lines(records: pd.DataFrame) -> list[str]:
    """What the interference rule did, counted per point (not per record); nothing for records before it."""
    if "attempt" not in records.columns:
        return []
    points = one_per_point(records)
    again = points[points["discarded_attempts"].fillna(0) > 0]
    flags = points["disturbed"] if "disturbed" in points.columns else pd.Series(False, index=points.index)
    disturbed = points[flag_is(flags, True)]
    lines = []
    if len(again):
        lines.append(
            f"interference: {len(again)} of {len(points)} point(s) measured again "
            f"({int(again['discarded_attempts'].sum())} disturbed attempt(s) kept in units/*.attempt*.json)"
        )
    if len(disturbed):
        lines.append(
            f"interference: {len(disturbed)} point(s) count although every attempt was disturbed "
            "(`disturbed` column; a quieter host, or `kit check`, helps)"
        )
    return lines


def report(records: pd.DataFrame, max_cv: float = MAX_CV) -> str:
    """The warnings as one text, or a line saying every series is stable."""
    lines = warnings_for(records, max_cv)
    return "\n".join(lines) if lines else "stability: every series within the rules (CV, outliers, interference)"
