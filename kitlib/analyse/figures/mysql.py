"""The MySQL figures (paper Figs. 10–13): throughput vs concurrency with the loss against native on
a right axis; throughput vs CPU utilization; latency vs concurrency; throughput vs latency.

Every mean carries its standard deviation (both axes where both are means) and the scatter-like
panels (Figs. 11 and 13) name each point's thread count, so a curve that turns back can be read."""

from __future__ import annotations

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import env_label, env_order, env_style, mean_std, sweep_axes

#: the swept column (client threads), as the experiment declares it
X = specs.schema("mysql").workload("oltp_read_write").sweep


def _joined(df: pd.DataFrame) -> pd.DataFrame:
    tps = mean_std(df, X, "tps").rename(columns={"mean": "tps", "std": "tps_sd"})
    for metric in ("latency_mean", "cpu_utilization"):
        other = mean_std(df, X, metric).rename(columns={"mean": metric, "std": f"{metric}_sd"})
        tps = tps.merge(other[["env", X, metric, f"{metric}_sd"]], on=["env", X], how="left")
    return tps


def _against(ax, table: pd.DataFrame, x: str) -> None:
    """tps against another mean, both with sd error bars, each point labelled with its thread count."""
    for env in env_order(table):
        rows = table[table["env"] == env].sort_values(X)
        ax.errorbar(
            rows[x],
            rows["tps"],
            xerr=rows[f"{x}_sd"],
            yerr=rows["tps_sd"],
            capsize=2,
            label=env_label(env),
            **env_style(env),
        )
        for _, row in rows.iterrows():
            ax.annotate(
                f"{int(row['threads'])}",
                (row[x], row["tps"]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
                color=env_style(env)["color"],
            )


@hosts.one_host(hosts.SD)
def mysql_figures(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 9), constrained_layout=True)
    sweep_axes(axes[0, 0], df, X, "tps", "transactions/s")
    axes[0, 0].set_title("Throughput vs concurrency (Fig. 10)")
    table = _joined(df)
    native = table[table["env"] == "native"].set_index(X)["tps"]
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if not native.empty:
        right = axes[0, 0].twinx()
        for env in [e for e in env_order(table) if e != "native"]:
            rows = table[table["env"] == env]
            loss = 100 * (1 - rows.set_index(X)["tps"] / native).dropna()
            right.plot(
                loss.index,
                loss.values,
                linestyle=":",
                color=env_style(env)["color"],
                alpha=0.8,
                label=f"{env}: loss vs native",
            )
        right.axhline(0, color="grey", linewidth=0.5)
        right.set_ylabel("loss vs native (%, dotted)")
        more = right.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    # outside the axes, so no curve is hidden behind it
    axes[0, 0].legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.14), ncol=2, frameon=False)
    _against(axes[0, 1], table, "cpu_utilization")
    axes[0, 1].set_xlabel("CPU utilization of the system under test (%)")
    axes[0, 1].set_ylabel("transactions/s")
    axes[0, 1].set_title("Throughput vs CPU utilization (Fig. 11; labels: threads)")
    sweep_axes(axes[1, 0], df, X, "latency_mean", "mean latency (ms)")
    axes[1, 0].set_title("Latency vs concurrency (Fig. 12)")
    _against(axes[1, 1], table, "latency_mean")
    axes[1, 1].set_xlabel("mean latency (ms)")
    axes[1, 1].set_ylabel("transactions/s")
    axes[1, 1].set_title("Throughput vs latency (Fig. 13; labels: threads)")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    axes[1, 1].legend(fontsize=7, loc="lower right")
    return fig
