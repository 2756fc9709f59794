"""Seed 004, "Latency Impact of Docker Containers: A Closer Look": shares, quota, bridge, overlay."""

from __future__ import annotations

import math

import pandas as pd

from kitlib import latency_analysis
from kitlib.claims.core import (
    INCONCLUSIVE,
    MIN_RUNS,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    Band,
    Claim,
    Effect,
    Verdict,
    all_of,
    compare,
    decide,
    exact,
    kind,
    missing,
)
from kitlib.stats import log_ratio_interval

SOURCE = "Latency Impact of Docker Containers"


def _runs_per_env(rows: pd.DataFrame, by: list[str]) -> int:
    counts = rows.groupby(["env", *by], dropna=False).size()
    return int(counts.min()) if len(counts) else 0


#: p99 at a quota more than this many times the unthrottled p99 is a collapsed tail
COLLAPSE_FACTOR = 3.0


def _latency_quota_cliff(df: pd.DataFrame) -> Verdict:
    """Each quota's p99 against the p99 at the largest quota (the server unthrottled), as a ratio with its
    95% interval: quotas well below the server's own CPU use (≤ 80% of it) must be decidedly collapsed
    (interval above 3×), quotas well above it (≥ 125%) decidedly not (interval below 3×)."""

    rows = df[df["experiment"] == "latency"]
    table = latency_analysis.quota_table(rows)
    if table.empty or len(table) < 2:
        return missing("latency quota sweep")
    p99 = rows[(rows["workload"] == "quota") & (rows["metric"] == "latency_p99")]
    n = _runs_per_env(p99, [])
    if n < MIN_RUNS:
        return Verdict(
            INCONCLUSIVE,
            f"only {n} run(s) per quota; at least {MIN_RUNS} are needed to tell a collapse of p99 from noise",
            n=n,
        )
    needed = latency_analysis.unthrottled_utilization(table)
    period = float(table["period"].iloc[0])
    reference_quota = float(table["quota"].max())
    reference = p99.loc[p99["quota"] == reference_quota, "value"]
    below, above, evidence = [], [], []
    for quota in sorted(float(q) for q in table["quota"] if float(q) != reference_quota):
        share = 100 * quota / period
        if needed * 0.8 < share < needed * 1.25:
            continue  # too close to the server's need to expect either
        ratio, low, high, _, _ = log_ratio_interval(p99.loc[p99["quota"] == quota, "value"], reference)
        collapsed = "yes" if low > COLLAPSE_FACTOR else "no" if high < COLLAPSE_FACTOR else "undecided"
        (below if share < needed else above).append((quota, ratio, low, high, collapsed))
        evidence.append(f"{quota:.0f} µs ({share:.0f}%): p99 × {ratio:.2g} [{low:.2g}, {high:.2g}]")
    if not below or not above:
        return Verdict(
            NOT_TESTABLE,
            f"the sweep has no quota well {'below' if not below else 'above'} the server's need "
            f"({needed:.0f}% of a core unthrottled)",
            n=n,
        )
    head = (
        f"server needs {needed:.0f}% of a core; p99 against the largest quota, 95% CI (Welch t on log values): "
        + "; ".join(evidence)
        + f"; the claim: collapsed (> {COLLAPSE_FACTOR:g}×) below 80% of the need, not collapsed above 125%"
    )
    wrong = [q for q, *_, c in below if c == "no"] + [q for q, *_, c in above if c == "yes"]
    undecided = [q for q, *_, c in below + above if c == "undecided"]
    closest = max(below, key=lambda item: item[0])
    common = dict(ratio=closest[1], ci_low=closest[2], ci_high=closest[3], n=n)
    if wrong:
        return Verdict(NOT_REPRODUCED, f"{head}: contradicted at {', '.join(f'{q:.0f}' for q in wrong)} µs", **common)
    if undecided:
        return Verdict(
            INCONCLUSIVE, f"{head}: undecided at {', '.join(f'{q:.0f}' for q in undecided)} µs; more runs", **common
        )
    return Verdict(REPRODUCED, f"{head}: every interval lies on its side", **common)


def _bridge_fixed_offset(df: pd.DataFrame) -> Verdict:
    """Offset part: its interval above 0. Size part: the change across the sizes measured (slope × range)
    within ±half the offset. Both must hold."""

    rows = df[(df["experiment"] == "latency") & (df["workload"] == "bridge") & (df["metric"] == "latency_mean")]
    table = latency_analysis.bridge_table(df[df["experiment"] == "latency"]) if not rows.empty else pd.DataFrame()
    fit = latency_analysis.bridge_fit(table) if not table.empty else None
    if fit is None or fit.n < 3:
        return missing("bridge vs host runs at 3 or more sizes")
    n = _runs_per_env(rows, [c for c in ("direction", "size_kb") if c in rows.columns])
    sizes = table["size_kb"].astype(float)
    span = float(sizes.max() - sizes.min())
    slope_ci = sorted((fit.slope_ci[0] * span, fit.slope_ci[1] * span))
    # the fit's intervals rest on the per-size means; runs per size set whether they may decide
    base = Effect(fit.offset_us, *fit.offset_ci, math.nan, n, f"line through {fit.n} sizes", "difference")
    size = Effect(fit.slope_us_per_kb * span, *slope_ci, math.nan, n, f"slope × {span:.0f} KB", "difference")
    half = abs(fit.offset_us) / 2
    return all_of(
        "fixed offset and no size effect",
        lambda _df: decide(base, Band(0.0, math.inf, "bridge − host offset above 0 (µs)"), "bridge − host at size 0"),
        lambda _df: decide(size, Band(-half, half, "within half the offset (µs)"), "size-dependent change"),
    )(df)


def _storage(operation: str, band: Band, by_size: bool):
    def predicate(df: pd.DataFrame) -> Verdict:
        rows = df[(df["experiment"] == "latency") & (df["workload"] == "storage") & (df["operation"] == operation)]
        if rows.empty:
            return missing(f"latency storage runs of {operation}")
        return compare("latency", "latency_mean", exact("docker-host-overlay"), "docker-host-volume", band)(rows)

    return predicate


CLAIMS: list[Claim] = [
    Claim(
        "quota_cliff",
        f"{SOURCE}, §3.2.3, Table 2, Fig. 2",
        "A CPU quota below the server's CPU use collapses the tail latency; above it, no effect",
        _latency_quota_cliff,
    ),
    Claim(
        "bridge_cost_fixed_offset",
        f"{SOURCE}, §3.3, Fig. 3",
        "The bridge adds a fixed latency per request, not a share proportional to message size",
        _bridge_fixed_offset,
    ),
    Claim(
        "overlay_costs_open_not_write",
        f"{SOURCE}, §3.4, Figs. 4–5",
        "The image's union filesystem (overlay here, AUFS in the paper) slows opening files (≥10%) "
        "but not writing to an open file (within ±25%)",
        all_of(
            "open slower, write not",
            _storage("open", Band(1.10, math.inf, "at least 10% slower"), False),
            _storage("write", Band(0.75, 1.25, "about equal (within ±25%)"), True),
        ),
    ),
    Claim(
        "docker_shares_near_native_latency",
        f"{SOURCE}, §3.2.2, Table 1",
        "Docker with CPU shares adds a small cost to request latency (about 6%): not faster, at most 15% slower",
        compare(
            "latency",
            "latency_mean",
            kind("docker", "shares"),
            "native",
            Band(1.0, 1.15, "1.00–1.15×"),
            workload="shares",
        ),
    ),
]

__all__ = ["CLAIMS", "NOT_TESTABLE"]
