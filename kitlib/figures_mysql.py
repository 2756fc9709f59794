"""The MySQL figures (paper Figs. 10–13): throughput vs concurrency with the loss against native on
a right axis; throughput vs CPU utilization; latency vs concurrency; throughput vs latency."""

from __future__ import annotations

import pandas as pd

from kitlib.plots import _style, mean_std, sweep_axes


def _joined(df: pd.DataFrame) -> pd.DataFrame:
    tps = mean_std(df, "threads", "tps").rename(columns={"mean": "tps", "std": "tps_sd"})
    for metric in ("latency_mean", "cpu_utilization"):
        other = mean_std(df, "threads", metric).rename(columns={"mean": metric})[["env", "threads", metric]]
        tps = tps.merge(other, on=["env", "threads"], how="left")
    return tps


def mysql_figures(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5), constrained_layout=True)
    sweep_axes(axes[0, 0], df, "threads", "tps", "transactions/s")
    axes[0, 0].set_title("Throughput vs concurrency (Fig. 10)")
    table = _joined(df)
    native = table[table["env"] == "native"].set_index("threads")["tps"]
    if not native.empty:
        right = axes[0, 0].twinx()
        for env, rows in table[table["env"] != "native"].groupby("env"):
            loss = 100 * (1 - rows.set_index("threads")["tps"] / native).dropna()
            right.plot(loss.index, loss.values, linestyle=":", color=_style(env)["color"], alpha=0.8)
        right.set_ylabel("loss vs native (%, dotted)")
    for env, rows in table.groupby("env"):
        rows = rows.sort_values("threads")
        axes[0, 1].plot(rows["cpu_utilization"], rows["tps"], label=env, **_style(env))
        axes[1, 1].plot(rows["latency_mean"], rows["tps"], label=env, **_style(env))
    axes[0, 1].set_xlabel("CPU utilization of the system under test (%)")
    axes[0, 1].set_ylabel("transactions/s")
    axes[0, 1].set_title("Throughput vs CPU utilization (Fig. 11)")
    sweep_axes(axes[1, 0], df, "threads", "latency_mean", "mean latency (ms)")
    axes[1, 0].set_title("Latency vs concurrency (Fig. 12)")
    axes[1, 1].set_xlabel("mean latency (ms)")
    axes[1, 1].set_ylabel("transactions/s")
    axes[1, 1].set_title("Throughput vs latency (Fig. 13)")
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    return fig
