"""The OLTP scale-out figure of the VMware VROOM! blog, post 2 (Fig. 2): aggregate throughput per environment
normalised to native.

One bar per environment and placement, its height the ratio of mean aggregate tps to native's at the
same placement and thread count; the error bar is the ratio's 95% interval computed as the claims
compute it (Welch t on logarithms), drawn only where each side has at least 3 trials. The mean
aggregate tps is written on each bar, so the absolute level of this host stays visible."""

from __future__ import annotations

import math

import pandas as pd

from kitlib.analyse.claims.core import effect_between
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import ENV_COLOURS, STUDIES, env_order
from kitlib.specs.scaleout_oltp import AGGREGATE

PLACEMENTS = ("default", "pinned")


def normalised(df: pd.DataFrame) -> pd.DataFrame:
    """Per environment, placement and threads: mean aggregate tps, its ratio to native and the interval."""
    rows = df[(df["metric"] == "tps") & (df["instance"].astype(str) == AGGREGATE)]
    table = []
    for (placement, threads), part in rows.groupby(["placement", "threads"], sort=True):
        for env in env_order(part):
            values = part.loc[part["env"] == env, "value"]
            ratio, low, high, n = (math.nan,) * 3 + (0,)
            if env == "native":  # the reference itself: 1, no interval against itself
                ratio, n = 1.0, len(values)
            elif "native" in set(part["env"]):
                found = effect_between(part, env, "native")
                if not isinstance(found, str):
                    ratio, low, high, n = found.value, found.low, found.high, found.n
            table.append(
                {
                    "env": env,
                    "placement": placement,
                    "threads": threads,
                    "tps": float(values.mean()),
                    "trials": len(values),
                    "ratio": ratio,
                    "ci_low": low,
                    "ci_high": high,
                    "n": n,
                }
            )
    return pd.DataFrame(table)


@hosts.one_host(hosts.CI95 + " of the ratio (at least 3 trials a side)")
def scaleout_oltp_figure(df: pd.DataFrame):
    import matplotlib.pyplot as plt

    table = normalised(df)
    threads = sorted(table["threads"].unique()) if not table.empty else []
    fig, axes = plt.subplots(
        1, max(1, len(threads)), figsize=(max(7, 4.5 * len(threads)), 4.8), constrained_layout=True, squeeze=False
    )
    for ax, t in zip(axes[0], threads, strict=False):
        part = table[table["threads"] == t]
        envs = env_order(part)
        placements = [p for p in PLACEMENTS if p in set(part["placement"])]
        width = 0.8 / max(1, len(placements))
        for k, placement in enumerate(placements):
            for g, env in enumerate(envs):
                row = part[(part["env"] == env) & (part["placement"] == placement)]
                if row.empty or math.isnan(row["ratio"].iloc[0]):
                    continue
                r = row.iloc[0]
                x = g + (k - (len(placements) - 1) / 2) * width
                yerr = None
                if not (math.isnan(r["ci_low"]) or math.isnan(r["ci_high"])):
                    yerr = [[r["ratio"] - r["ci_low"]], [r["ci_high"] - r["ratio"]]]
                ax.bar(
                    x,
                    r["ratio"],
                    width,
                    yerr=yerr,
                    capsize=3,
                    color=ENV_COLOURS.get(env.split("+")[0], "grey"),
                    hatch="//" if placement == "pinned" else None,
                    edgecolor="black",
                    linewidth=0.5,
                    label=placement if g == 0 else None,
                )
                ax.annotate(
                    f"{r['tps']:.0f} tps", (x, 0.02), rotation=90, ha="center", va="bottom", fontsize=7, color="white"
                )
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_xticks(range(len(envs)), envs, fontsize=8, rotation=15)
        ax.set_ylabel("aggregate tps ÷ native (same placement)")
        instances = int(df["instances"].max()) if "instances" in df.columns else "N"
        ax.set_title(f"{instances} instances × {t} threads", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        if len(placements) > 1:
            ax.legend(fontsize=8, title="placement", title_fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(
        f"OLTP scale-out, aggregate tps ÷ native ({STUDIES['vroom']}, post 2, Fig. 2)",
        fontsize=10,
    )
    return fig
