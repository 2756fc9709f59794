"""Tables and fits of the latency study (seed 004): records in, DataFrames out.

- `shares_table`: mean, median, p99 per environment (the study's Table 1)
- `quota_table`: per quota the mean, median, p99, requests > 1 ms, that count × quota, and the
  server's measured CPU utilization against quota/period (Table 2 plus the throttling explanation)
- `bridge_table` / `bridge_fit`: bridge minus host latency per message size, in µs and percent,
  and a straight-line fit that says whether the bridge costs a fixed offset or a proportion
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SUMMARY = ("latency_mean", "latency_median", "latency_p99", "slow_requests", "server_cpu_utilization")


def _wide(df: pd.DataFrame, workload: str, index: list[str]) -> pd.DataFrame:
    rows = df[(df["workload"] == workload) & df["metric"].isin(SUMMARY)]
    if rows.empty:
        return pd.DataFrame()
    return rows.pivot_table(index=index, columns="metric", values="value", aggfunc="mean").reset_index()


def shares_table(df: pd.DataFrame) -> pd.DataFrame:
    return _wide(df, "shares", ["env"])


def quota_table(df: pd.DataFrame) -> pd.DataFrame:
    table = _wide(df, "quota", ["quota", "period"])
    if table.empty:
        return table
    table["slow_x_quota"] = table["slow_requests"] * table["quota"]
    table["quota_share_pct"] = 100.0 * table["quota"] / table["period"]
    return table.sort_values("quota").reset_index(drop=True)


def tail_collapse_quota(table: pd.DataFrame, p99_factor: float = 3.0) -> float | None:
    """The largest quota whose p99 exceeds `p99_factor` × the p99 at the largest quota (None if none)."""
    if table.empty:
        return None
    reference = table.iloc[-1]["latency_p99"]
    collapsed = table[table["latency_p99"] > p99_factor * reference]
    return float(collapsed["quota"].max()) if not collapsed.empty else None


def unthrottled_utilization(table: pd.DataFrame) -> float | None:
    """The server's CPU utilization (%) with the largest quota: what it needs when not throttled."""
    return None if table.empty else float(table.iloc[-1]["server_cpu_utilization"])


def bridge_table(df: pd.DataFrame) -> pd.DataFrame:
    rows = df[(df["workload"] == "bridge") & (df["metric"] == "latency_mean")]
    if rows.empty or not {"docker-host-volume", "docker-nat-volume"} <= set(rows["env"]):
        return pd.DataFrame()
    table = rows.pivot_table(index=["direction", "size_kb"], columns="env", values="value", aggfunc="mean")
    table = table.rename(columns={"docker-host-volume": "host_us", "docker-nat-volume": "bridge_us"})
    table["difference_us"] = table["bridge_us"] - table["host_us"]
    table["difference_pct"] = 100.0 * table["difference_us"] / table["host_us"]
    return table.reset_index()


@dataclass(frozen=True)
class BridgeFit:
    """difference_us ≈ offset_us + slope_us_per_kb × size_kb, with 95% intervals."""

    offset_us: float
    offset_ci: tuple[float, float]
    slope_us_per_kb: float
    slope_ci: tuple[float, float]
    n: int

    @property
    def verdict(self) -> str:
        """`fixed offset` when the size explains no significant part of the difference."""
        if self.n < 3:
            return "too few sizes to tell"
        slope_significant = self.slope_ci[0] > 0 or self.slope_ci[1] < 0
        return "proportional to size" if slope_significant else "fixed offset"


def bridge_fit(table: pd.DataFrame, alpha: float = 0.05) -> BridgeFit | None:
    """Least-squares line through the per-size differences (both directions pooled), intervals at 1 − alpha."""
    from scipy import stats

    if table.empty or len(table) < 2:
        return None
    fit = stats.linregress(table["size_kb"].astype(float), table["difference_us"].astype(float))
    n = len(table)
    t = stats.t.ppf(1 - alpha / 2, n - 2) if n > 2 else np.nan
    return BridgeFit(
        offset_us=float(fit.intercept),
        offset_ci=(float(fit.intercept - t * fit.intercept_stderr), float(fit.intercept + t * fit.intercept_stderr)),
        slope_us_per_kb=float(fit.slope),
        slope_ci=(float(fit.slope - t * fit.stderr), float(fit.slope + t * fit.stderr)),
        n=n,
    )


def storage_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, median and p99 per operation and size, overlay beside volume, with the overlay/volume ratio."""
    rows = df[df["workload"].isin(["storage", "copy_up"]) & df["metric"].isin(SUMMARY)]
    if rows.empty:
        return pd.DataFrame()
    rows = rows.assign(
        size=rows.get("size_kb", pd.Series(index=rows.index, dtype=float)).fillna(0).astype(float)
        + 1024 * rows.get("size_mb", pd.Series(index=rows.index, dtype=float)).fillna(0).astype(float)
    )
    table = rows.pivot_table(index=["operation", "size", "metric"], columns="env", values="value", aggfunc="mean")
    if {"docker-host-overlay", "docker-host-volume"} <= set(table.columns):
        table["overlay_over_volume"] = table["docker-host-overlay"] / table["docker-host-volume"]
    return table.reset_index().rename(columns={"size": "size_kb"})


@dataclass(frozen=True)
class LineFit:
    """y ≈ intercept + slope × x with 95% intervals and the share of variance explained."""

    intercept: float
    slope: float
    slope_ci: tuple[float, float]
    r_squared: float
    n: int

    @property
    def slope_significant(self) -> bool:
        return self.n > 2 and (self.slope_ci[0] > 0 or self.slope_ci[1] < 0)


def line_fit(x, y) -> LineFit | None:
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or len(set(x)) < 2:
        return None
    fit = stats.linregress(x, y)
    t = stats.t.ppf(0.975, len(x) - 2) if len(x) > 2 else np.nan
    return LineFit(
        float(fit.intercept),
        float(fit.slope),
        (float(fit.slope - t * fit.stderr), float(fit.slope + t * fit.stderr)),
        float(fit.rvalue**2),
        len(x),
    )


def walk_fit(df: pd.DataFrame) -> LineFit | None:
    """Recursive-listing time (mean of each run, µs) against the number of image layers."""
    rows = df[(df["workload"] == "layers") & (df["metric"] == "latency_mean")]
    return None if rows.empty else line_fit(rows["layers"], rows["value"])


def copy_up_fit(df: pd.DataFrame) -> LineFit | None:
    """First-write time on overlay (µs) against the size of the lower-layer file (MB)."""
    rows = df[(df["workload"] == "copy_up") & (df["metric"] == "latency_mean") & (df["env"] == "docker-host-overlay")]
    return None if rows.empty else line_fit(rows["size_mb"], rows["value"])
