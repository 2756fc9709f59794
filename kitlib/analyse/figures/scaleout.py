"""The scale-out figures of the VMware VROOM! blog, post 4 ("Scaling Out Redis Performance with Docker on
vSphere 6.0"): throughput of the baseline and the scale-out per
environment (Fig. 3) and the speedup over the baseline with the ideal N drawn (Fig. 4).

As the post, bars are means over trials with the range (min–max) as error bars; one group of bars
per environment and placement, so pinned and default placements sit side by side."""

from __future__ import annotations

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import ENV_COLOURS, STUDIES, env_order

SCHEMA = specs.schema("scaleout")

CONFIGS = ("baseline", "scale-out")


def _groups(df: pd.DataFrame) -> list[tuple[str, str]]:
    placements = [p for p in ("default", "pinned") if "placement" in df.columns and p in set(df["placement"])]
    return [(env, p) for env in env_order(df) for p in placements or ["default"]]


def _stats(rows: pd.DataFrame) -> tuple[float, float, float]:
    values = rows["value"]
    return float(values.mean()), float(values.mean() - values.min()), float(values.max() - values.mean())


def _of(rows: pd.DataFrame, env: str, placement: str) -> pd.DataFrame:
    """The rows of one bar: one environment at one placement (records without placement: all)."""
    rows = rows[rows["env"] == env]
    return rows[rows["placement"] == placement] if "placement" in rows.columns else rows


@hosts.one_host(hosts.RANGE)
def throughput(df: pd.DataFrame):
    """Fig. 3 of the post: throughput of the baseline and of the scale-out, per environment and placement."""
    import matplotlib.pyplot as plt

    throughput = SCHEMA.headline_rows(df[df["metric"] == "throughput"])
    groups = _groups(df)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups) + 2), 4.5), constrained_layout=True)
    width = 0.38
    for k, config in enumerate(CONFIGS):
        for g, (env, placement) in enumerate(groups):
            rows = _of(throughput[throughput["config"] == config], env, placement)
            if rows.empty:
                continue
            mean, low, high = _stats(rows)
            ax.bar(
                g + (k - 0.5) * width,
                mean / 1000,
                width,
                yerr=[[low / 1000], [high / 1000]],
                capsize=3,
                color=ENV_COLOURS.get(env.split("+")[0], "grey"),
                alpha=0.45 if config == "baseline" else 0.95,
                hatch="//" if config == "baseline" else None,
                edgecolor="black",
                linewidth=0.5,
                label=config if g == 0 else None,
            )
    ax.set_xticks(range(len(groups)), [f"{env}\n{placement}" for env, placement in groups], fontsize=8)
    ax.set_ylabel("throughput (1,000 requests/s)")
    ax.set_title(f"Baseline (1 server, 1 client) and scale-out ({STUDIES['vroom']}, post 4, Fig. 3)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


@hosts.one_host(hosts.RANGE)
def speedup(df: pd.DataFrame):
    """Fig. 4 of the post: the scale-out's speedup over the baseline, the ideal N drawn."""
    import matplotlib.pyplot as plt

    speedup = df[df["metric"] == "speedup"]
    groups = _groups(df)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(groups) + 2), 4.5), constrained_layout=True)
    ideal = None
    for g, (env, placement) in enumerate(groups):
        rows = _of(speedup, env, placement)
        if rows.empty:
            continue
        mean, low, high = _stats(rows)
        ax.bar(
            g,
            mean,
            0.6,
            yerr=[[low], [high]],
            capsize=3,
            color=ENV_COLOURS.get(env.split("+")[0], "grey"),
            edgecolor="black",
            linewidth=0.5,
        )
        ax.annotate(
            f"{mean:.2f}×", (g, mean + high), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=8
        )
        if "instances" in rows.columns:
            ideal = max(ideal or 0, int(rows["instances"].max()))
    if ideal is not None:
        ax.axhline(ideal, color="black", linestyle="--", linewidth=1, label=f"ideal: N = {ideal}")
        ax.legend(fontsize=8)
    ax.axhline(1, color="grey", linewidth=0.5)
    ax.set_xticks(range(len(groups)), [f"{env}\n{placement}" for env, placement in groups], fontsize=8)
    ax.set_ylabel("speedup over the baseline (×)")
    ax.set_title(f"Speedup of the scale-out ({STUDIES['vroom']}, post 4, Fig. 4)", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    return fig
