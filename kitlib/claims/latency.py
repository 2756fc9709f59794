"""Seed 004, "Latency Impact of Docker Containers: A Closer Look": shares, quota, bridge, overlay."""

from __future__ import annotations

import math

import pandas as pd

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

SOURCE = "Latency Impact of Docker Containers"


def _runs_per_env(rows: pd.DataFrame, by: list[str]) -> int:
    counts = rows.groupby(["env", *by], dropna=False).size()
    return int(counts.min()) if len(counts) else 0


def _latency_quota_cliff(df: pd.DataFrame) -> Verdict:
    from kitlib import latency_analysis

    rows = df[df["experiment"] == "latency"]
    table = latency_analysis.quota_table(rows)
    if table.empty or len(table) < 2:
        return missing("latency quota sweep")
    n = _runs_per_env(rows[(rows["workload"] == "quota") & (rows["metric"] == "latency_p99")], [])
    needed = latency_analysis.unthrottled_utilization(table)
    collapsed = latency_analysis.tail_collapse_quota(table)
    if n < MIN_RUNS:
        return Verdict(
            INCONCLUSIVE,
            f"only {n} run(s) per quota; at least {MIN_RUNS} are needed to tell a collapse of p99 from noise",
            n=n,
        )
    if collapsed is None:
        return Verdict(
            NOT_REPRODUCED, f"no quota made p99 exceed 3× the unthrottled p99 (server used {needed:.0f}%)", n=n
        )
    share = 100 * collapsed / float(table["period"].iloc[0])
    ok = share <= needed * 1.25  # the tail collapses only where the quota is below what the server needs
    return Verdict(
        REPRODUCED if ok else NOT_REPRODUCED,
        f"p99 collapses up to quota {collapsed:.0f} µs ({share:.0f}% of the period); the server needs "
        f"{needed:.0f}% of a core unthrottled; the claim needs the collapse at or below 125% of that",
        ratio=share / needed if needed else float("nan"),
        n=n,
    )


def _bridge_fixed_offset(df: pd.DataFrame) -> Verdict:
    """Offset part: its interval above 0. Size part: the change across the sizes measured (slope × range)
    within ±half the offset. Both must hold."""
    from kitlib import latency_analysis

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
