"""Figures of the latency study ("Latency Impact of Docker Containers: A Closer Look"), named after its
figures with the study's short name (`closer-look-…`, never to be read as Felter's Figs. 1–6): one
host's records in, a Figure out."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import STUDIES, env_label, env_order, env_style, legend, readable_log_ticks, step_cdf
from kitlib.core import latency_analysis

STUDY = STUDIES["closer-look"]


@hosts.one_host(hosts.NO_BARS)
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
    native = "native (a VM guest)" if hosts.is_vm_guest(df, hosts.host_of(df)) else "bare metal"
    ax.set_title(f"Latency CDF, {native} vs Docker CPU shares", fontsize=10)
    fig.suptitle(f"{STUDY}, Fig. 1")
    ax.grid(True, alpha=0.3, which="both")
    legend(ax, fontsize=8, loc="center right")
    return fig


@hosts.one_host(hosts.NO_BARS)
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
    ax.set_title("Requests over 1 ms vs CPU quota", fontsize=10)
    fig.suptitle(f"{STUDY}, Fig. 2")
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)
    return fig


@hosts.one_host(hosts.SD)
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
                stats["size_kb"], stats["mean"], yerr=stats["std"], capsize=3, label=env_label(env), **env_style(env)
            )
        ax.set_title(direction.replace("_", " "))
        ax.set_xlabel("message size (KB)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("mean round-trip latency (µs)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Host network vs bridge with port mapping ({STUDY}, Fig. 3)")
    return fig


#: (workload, operation, x, x label, title, unit divisor, unit): copy-up of a 64 MB file takes ~0.1 s,
#: so it reads in ms; the listing's axis starts at zero so a 5% difference does not look like a cliff
STORAGE_PANELS = (
    ("storage", "write", "size_kb", "write + flush, size (KB)", "Fig. 4: write", 1.0, "µs"),
    ("storage", "open", "env", "", "Fig. 5: open + close", 1.0, "µs"),
    ("copy_up", "copy_up", "size_mb", "lower-layer file size (MB)", "first write (copy-up)", 1000.0, "ms"),
    ("layers", "walk", "layers", "image layers", "Fig. 6: recursive listing", 1000.0, "ms"),
)


@hosts.one_host(hosts.SD)
def storage_operations(df: pd.DataFrame):
    """Figs. 4–6: write latency by size, open latency, copy-up by file size, listing time by layers."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 4.2), constrained_layout=True)
    for ax, (workload, operation, x, xlabel, title, divisor, unit) in zip(axes, STORAGE_PANELS, strict=True):
        rows = df[(df["workload"] == workload) & (df["metric"] == "latency_mean") & (df["operation"] == operation)]
        if x == "env":
            stats = rows.groupby("env")["value"].agg(["mean", "std"])
            ax.bar(
                [env_label(e) for e in stats.index],
                stats["mean"] / divisor,
                yerr=stats["std"] / divisor,
                capsize=3,
                color=[env_style(e)["color"] for e in stats.index],
            )
            ax.tick_params(axis="x", labelrotation=15)
        else:
            for env, group in rows.groupby("env"):
                stats = group.groupby(x)["value"].agg(["mean", "std"]).reset_index()
                ax.errorbar(
                    stats[x],
                    stats["mean"] / divisor,
                    yerr=stats["std"] / divisor,
                    capsize=3,
                    label=env_label(env),
                    **env_style(env),
                )
            ax.set_xlabel(xlabel)
            legend(ax, fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(f"mean latency ({unit})")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"Overlay vs volume file operations ({STUDY}, Figs. 4–6)")
    return fig
