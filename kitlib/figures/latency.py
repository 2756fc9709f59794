"""Figures of the latency study, named after its figures: DataFrames in, Figures out."""

from __future__ import annotations

import pandas as pd

from kitlib import latency_analysis
from kitlib.figures.style import env_order, env_style, legend, readable_log_ticks, step_cdf


def latency_cdf(df: pd.DataFrame, workload: str = "shares"):
    """Fig. 1: the round-trip latency CDF per environment, as steps through the percentiles the records
    keep (the service measures every request; its records keep p1…p99.9, so the CDF stops at p99.9)."""
    import matplotlib.pyplot as plt

    rows = df[(df["workload"] == workload) & (df["metric"] == "latency_percentile")]
    fig, ax = plt.subplots(figsize=(6.5, 4.2), constrained_layout=True)
    for env in env_order(rows):
        curve = rows[rows["env"] == env].groupby("percentile")["value"].mean().sort_index()
        step_cdf(ax, curve, env)
    ax.set_xscale("log")
    readable_log_ticks(ax.xaxis)
    ax.set_xlabel("round-trip latency (µs, log scale)")
    ax.set_ylabel("fraction of requests")
    count = rows["percentile"].nunique()
    if count:
        low, high = rows["percentile"].min(), rows["percentile"].max()
        ax.text(
            0.99,
            0.02,
            f"steps through {count} recorded percentiles (p{low:g}–p{high:g});\nmean of the runs",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="grey",
        )
    ax.set_title("Latency CDF, bare metal vs Docker CPU shares (Fig. 1)")
    ax.grid(True, alpha=0.3, which="both")
    legend(ax, fontsize=8, loc="center right")
    return fig


def quota_figure(df: pd.DataFrame):
    """Fig. 2 from the records: the quota sweep's table, with the server's CPU use when unthrottled."""
    table = latency_analysis.quota_table(df)
    return slow_requests_vs_quota(table, latency_analysis.unthrottled_utilization(table))


def slow_requests_vs_quota(table: pd.DataFrame, unthrottled_utilization: float | None = None):
    """Fig. 2: requests slower than 1 ms and the p99 against the CPU quota."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    ax.plot(table["quota"], table["slow_requests"], marker="o", color="#d62728", label="requests > 1 ms")
    ax.set_xlabel("--cpu-quota (µs per 10 ms period)")
    ax.set_ylabel("requests > 1 ms")
    right = ax.twinx()
    right.plot(table["quota"], table["latency_p99"], marker="s", color="#1f77b4", label="p99 (µs)")
    right.set_ylabel("p99 latency (µs)")
    right.set_yscale("log")
    readable_log_ticks(right.yaxis)
    if unthrottled_utilization is not None:
        period = float(table["period"].iloc[0])
        ax.axvline(
            unthrottled_utilization / 100.0 * period,
            color="grey",
            linestyle=":",
            label=f"server CPU use × period ({unthrottled_utilization:.0f}%)",
        )
    ax.set_title("Requests over 1 ms vs CPU quota (Fig. 2)")
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
    return fig


def bridge_vs_host(df: pd.DataFrame):
    """Fig. 3: mean latency against message size, host network vs bridge, per direction."""
    import matplotlib.pyplot as plt

    rows = df[(df["workload"] == "bridge") & (df["metric"] == "latency_mean")]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True, sharey=True)
    for ax, direction in zip(axes, ("server_receives", "server_sends"), strict=True):
        part = rows[rows["direction"] == direction]
        for env, group in part.groupby("env"):
            stats = group.groupby("size_kb")["value"].agg(["mean", "std"]).reset_index()
            ax.errorbar(
                stats["size_kb"], stats["mean"], yerr=stats["std"].fillna(0), capsize=3, label=env, **env_style(env)
            )
        ax.set_title(direction.replace("_", " "))
        ax.set_xlabel("message size (KB)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("mean round-trip latency (µs)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Host network vs bridge with port mapping (Fig. 3)")
    return fig


def storage_operations(df: pd.DataFrame):
    """Figs. 4–6: write latency by size, open latency, copy-up by file size, listing time by layers."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8), constrained_layout=True)
    panels = (
        ("storage", "write", "size_kb", "write + flush, size (KB)", "Fig. 4: write"),
        ("storage", "open", "env", "", "Fig. 5: open + close"),
        ("copy_up", "copy_up", "size_mb", "lower-layer file size (MB)", "first write (copy-up)"),
        ("layers", "walk", "layers", "image layers", "Fig. 6: recursive listing"),
    )
    for ax, (workload, operation, x, xlabel, title) in zip(axes, panels, strict=True):
        rows = df[(df["workload"] == workload) & (df["metric"] == "latency_mean") & (df["operation"] == operation)]
        if x == "env":
            stats = rows.groupby("env")["value"].agg(["mean", "std"])
            ax.bar(
                stats.index,
                stats["mean"],
                yerr=stats["std"].fillna(0),
                capsize=3,
                color=[env_style(e)["color"] for e in stats.index],
            )
            ax.tick_params(axis="x", labelrotation=15)
        else:
            for env, group in rows.groupby("env"):
                stats = group.groupby(x)["value"].agg(["mean", "std"]).reset_index()
                ax.errorbar(
                    stats[x], stats["mean"], yerr=stats["std"].fillna(0), capsize=3, label=env, **env_style(env)
                )
            ax.set_xlabel(xlabel)
            ax.legend(fontsize=7)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("mean latency (µs)")
        ax.grid(True, alpha=0.3)
    return fig
