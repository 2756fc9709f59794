"""The web-tier figures (seed 002, post 3, Figs. 2–5): the mean and 90th-percentile latency of every
operation per environment against the operation's threshold, at the largest user population every
environment ran, for one instance (Figs. 2–3) and scaled out (Figs. 4–5); and the users sweep with the
peak population whose every operation meets its threshold (Weathervane's "peak users", CloudStone's
pass/fail on the 90th percentile)."""

from __future__ import annotations

import math

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import (
    env_label,
    env_order,
    env_style,
    grouped_bars,
    legend,
    readable_log_ticks,
    shared_legend,
)
from kitlib.specs.webtier import FREQUENT, TABLE1_MIX, peak_of, population_verdicts, thresholds_of

#: the swept column, as the experiment declares it
X = specs.schema("webtier").workload("cloudstone").sweep
OPERATIONS = list(TABLE1_MIX)


def peak_users(df: pd.DataFrame) -> pd.DataFrame:
    """Per environment and population, the count of operations whose mean p90 over runs is over its
    threshold, the failed requests, whether it passes, and the environment's peak population: the rule
    the peak-users search measures by (`kitlib.specs.webtier.population_verdicts`, `peak_of`); with
    `peak_lower_bound` where no population of the environment failed (the search stopped at its limit, or
    none ran: a surveyed run), so the machine was not driven to a failure and the peak is only a floor."""
    table = population_verdicts(df)
    peaks = {env: peak_of(part) for env, part in table.groupby("env")}
    table["peak_users"] = table["env"].map(peaks)
    unfailed = {env: bool(part["passes"].all()) for env, part in table.groupby("env")}
    table["peak_lower_bound"] = [
        bool(pd.notna(peak) and unfailed[env]) for env, peak in zip(table["env"], table["peak_users"], strict=True)
    ]
    return table


def scaled_out(df: pd.DataFrame) -> pd.Series:
    """Rows of a scaled-out run (more than one instance); a run of one records no `instances`."""
    if "instances" not in df.columns:
        return pd.Series(False, index=df.index)
    return pd.to_numeric(df["instances"], errors="coerce").fillna(1) > 1


def _operation_panels(axes, rows: pd.DataFrame, limits: dict[str, float], what: str) -> None:
    """Mean (top) and p90 (bottom) latency per operation, frequent (left) then the others (right), at the
    largest population every environment ran, each operation's threshold drawn over its bars."""
    common = set.intersection(*(set(g[X]) for _, g in rows.groupby("env"))) if len(rows) else set()
    users = max(common) if common else None
    groups = [("frequent operations", list(FREQUENT)), ("less frequent", OPERATIONS[4:])]
    for row, metric, name in ((0, "latency_mean", "mean"), (1, "latency_p90", "90th percentile")):
        for col, (title, ops) in enumerate(groups):
            ax = axes[row, col]
            chosen = rows[(rows["metric"] == metric) & (rows[X] == users) & rows["operation"].isin(ops)]
            present = [op for op in ops if op in set(chosen["operation"])]
            if not present:
                legend(ax)
                continue
            grouped_bars(ax, chosen, "operation", present, f"{name} latency (ms, log scale)")
            ax.get_legend().remove()  # one legend for the figure (`shared_legend`)
            half = 0.4 / max(chosen["env"].nunique(), 1)  # half a bar: grouped_bars shares 0.8 among them
            for i, op in enumerate(present):
                ax.hlines(limits[op], i - half, i + 0.8 - half, colors="red", linestyles="--", linewidth=1)
            # a log axis: milliseconds of a small machine and the 250/500 ms thresholds both readable
            ax.set_yscale("log")
            readable_log_ticks(ax.yaxis)
            # the thresholds and every bar in view, the bars from the decade below the smallest (a log
            # axis left to itself started them just under it, and a 10% difference looked twofold)
            means = chosen.groupby(["env", "operation"])["value"].mean()
            smallest = means[means > 0].min() if (means > 0).any() else 1.0
            ax.set_ylim(
                bottom=10 ** math.floor(math.log10(smallest)),
                top=max(ax.get_ylim()[1], 1.5 * max(limits[op] for op in present)),
            )
            ax.set_title(f"{name}, {title} ({what[col]}), {users:g} users; dashed: threshold", fontsize=10)


@hosts.one_host(hosts.SD)
def latency_figures(df: pd.DataFrame):
    """Figs. 2–3 of the post, one instance: mean and p90 latency per operation (frequent, then the others)
    at the largest population every environment ran, each operation's threshold drawn over its bars; and
    the aggregate latency against users with each environment's peak population marked. None when every
    run was scaled out (`scaleout_figures` draws those)."""
    import matplotlib.pyplot as plt

    df = df[~scaled_out(df)]
    if df.empty:
        return None
    rows = df[df["operation"].isin(OPERATIONS)]
    limits = thresholds_of(df)
    fig, axes = plt.subplots(3, 2, figsize=(13, 12), constrained_layout=True)
    _operation_panels(axes, rows, limits, ("Fig. 2", "Fig. 3"))
    sweep = df[(df["operation"] == "Aggregated") & (df["metric"].isin(["latency_mean", "latency_p90"]))]
    peaks = peak_users(df)
    for col, metric in enumerate(("latency_mean", "latency_p90")):
        ax = axes[2, col]
        table = sweep[sweep["metric"] == metric].groupby(["env", X])["value"].agg(["mean", "std"]).reset_index()
        for env in env_order(table):
            own = table[table["env"] == env]
            own_peaks = peaks[(peaks["env"] == env) & peaks["peak_users"].notna()]
            if own_peaks.empty:
                label = env_label(env) + " (no population passes)"
            elif own_peaks["peak_lower_bound"].iloc[0]:
                label = env_label(env) + f" (peak ≥ {int(own_peaks['peak_users'].iloc[0])} users: none measured fails)"
            else:
                label = env_label(env) + f" (peak {int(own_peaks['peak_users'].iloc[0])} users)"
            ax.errorbar(own[X], own["mean"], yerr=own["std"], capsize=3, label=label, **env_style(env))
        ax.set_xlabel("users")
        ax.set_ylabel(f"{'mean' if metric == 'latency_mean' else '90th percentile'} latency, all operations (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    swept = [ax for ax in axes[2] if ax.get_legend_handles_labels()[0]]
    shared_legend(fig, swept or list(axes[:2].flat), ncol=3)  # the sweep's entries name each environment's peak
    axes[2, 0].set_title(
        "users sweep; peak: the most users with every operation's p90 within its threshold", fontsize=10
    )
    fig.suptitle("Web tier (CloudStone operations): latency per operation against its threshold")
    return fig


@hosts.one_host(hosts.SD)
def scaleout_figures(df: pd.DataFrame):
    """Figs. 4–5 of the post, scaled out: mean and p90 latency per operation of every instance (bars: the
    mean over instances and runs, error bars their sd) at the largest population every environment ran,
    for the largest instance count measured; None when no run was scaled out."""
    import matplotlib.pyplot as plt

    df = df[scaled_out(df)]
    if df.empty:
        return None
    most = int(pd.to_numeric(df["instances"]).max())
    df = df[pd.to_numeric(df["instances"]) == most]
    placements = ", ".join(sorted(set(df["placement"].dropna().astype(str)))) if "placement" in df.columns else ""
    rows = df[df["operation"].isin(OPERATIONS)]
    fig, axes = plt.subplots(2, 2, figsize=(13, 8), constrained_layout=True)
    _operation_panels(axes, rows, thresholds_of(df), ("Fig. 4", "Fig. 5"))
    shared_legend(fig, list(axes.flat), ncol=3)
    fig.suptitle(
        f"Web tier scaled out: {most} instances, users per instance, placement {placements or 'default'}; "
        "bars: mean over instances and runs"
    )
    return fig
