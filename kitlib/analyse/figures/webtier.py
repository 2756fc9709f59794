"""The web-tier figures (seed 002, post 3, Figs. 2–3): the mean and 90th-percentile latency of every
operation per environment against the operation's threshold, at the largest user population every
environment ran; and the users sweep with the peak population whose every operation meets its
threshold (Weathervane's "peak users", CloudStone's pass/fail on the 90th percentile)."""

from __future__ import annotations

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import env_label, env_order, env_style, grouped_bars, legend, readable_log_ticks
from kitlib.specs.webtier import FREQUENT, TABLE1_MIX, THRESHOLDS_MS

#: the swept column, as the experiment declares it
X = specs.schema("webtier").workload("cloudstone").sweep
OPERATIONS = list(TABLE1_MIX)


def thresholds_of(df: pd.DataFrame) -> dict[str, float]:
    """Each operation's threshold as the runs recorded it (`threshold_ms` per record), else the post's."""
    if "threshold_ms" not in df.columns:
        return dict(THRESHOLDS_MS)
    recorded = df.dropna(subset=["threshold_ms"]).groupby("operation")["threshold_ms"].first()
    return {**THRESHOLDS_MS, **{str(k): float(v) for k, v in recorded.items()}}


def peak_users(df: pd.DataFrame) -> pd.DataFrame:
    """Per environment, the largest user count at which the mean over runs of every operation's p90 lies
    at or under its threshold, with the count of operations over it at every population."""
    limits = thresholds_of(df)
    p90 = df[(df["metric"] == "latency_p90") & df["operation"].isin(OPERATIONS)]
    means = p90.groupby(["env", X, "operation"])["value"].mean().reset_index()
    means["over"] = means["value"] > means["operation"].map(limits)
    table = means.groupby(["env", X])["over"].sum().reset_index(name="operations_over")
    passing = table[table["operations_over"] == 0].groupby("env")[X].max()
    table["peak_users"] = table["env"].map(passing)
    return table


@hosts.one_host(hosts.SD)
def latency_figures(df: pd.DataFrame):
    """Figs. 2–3 of the post: mean and p90 latency per operation (frequent, then the others) at the
    largest population every environment ran, each operation's threshold drawn over its bars; and the
    aggregate latency against users with each environment's peak population marked."""
    import matplotlib.pyplot as plt

    rows = df[df["operation"].isin(OPERATIONS)]
    common = set.intersection(*(set(g[X]) for _, g in rows.groupby("env"))) if len(rows) else set()
    users = max(common) if common else None
    limits = thresholds_of(df)
    fig, axes = plt.subplots(3, 2, figsize=(13, 12), constrained_layout=True)
    groups = [("frequent operations (Fig. 2)", list(FREQUENT)), ("less frequent (Fig. 3)", OPERATIONS[4:])]
    for row, metric, name in ((0, "latency_mean", "mean"), (1, "latency_p90", "90th percentile")):
        for col, (title, ops) in enumerate(groups):
            ax = axes[row, col]
            chosen = rows[(rows["metric"] == metric) & (rows[X] == users) & rows["operation"].isin(ops)]
            present = [op for op in ops if op in set(chosen["operation"])]
            if not present:
                legend(ax)
                continue
            grouped_bars(ax, chosen, "operation", present, f"{name} latency (ms, log scale)")
            half = 0.4 / max(chosen["env"].nunique(), 1)  # half a bar: grouped_bars shares 0.8 among them
            for i, op in enumerate(present):
                ax.hlines(limits[op], i - half, i + 0.8 - half, colors="red", linestyles="--", linewidth=1)
            # a log axis: milliseconds of a small machine and the 250/500 ms thresholds both readable
            ax.set_yscale("log")
            readable_log_ticks(ax.yaxis)
            ax.legend(fontsize=7, loc="center right")  # clear of the thresholds at the top
            ax.set_title(f"{name}, {title}, {users} users; dashed: threshold", fontsize=10)
    sweep = df[(df["operation"] == "Aggregated") & (df["metric"].isin(["latency_mean", "latency_p90"]))]
    peaks = peak_users(df)
    for col, metric in enumerate(("latency_mean", "latency_p90")):
        ax = axes[2, col]
        table = sweep[sweep["metric"] == metric].groupby(["env", X])["value"].agg(["mean", "std"]).reset_index()
        for env in env_order(table):
            own = table[table["env"] == env]
            peak = peaks[peaks["env"] == env]["peak_users"].dropna()
            label = env_label(env) + (f" (peak {int(peak.iloc[0])} users)" if len(peak) else " (no population passes)")
            ax.errorbar(own[X], own["mean"], yerr=own["std"], capsize=3, label=label, **env_style(env))
        ax.set_xlabel("users")
        ax.set_ylabel(f"{'mean' if metric == 'latency_mean' else '90th percentile'} latency, all operations (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        legend(ax, fontsize=7)
    axes[2, 0].set_title("users sweep; peak: the most users with every operation's p90 within its threshold")
    fig.suptitle("Web tier (CloudStone operations): latency per operation against its threshold")
    return fig
