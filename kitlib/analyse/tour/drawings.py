"""The chapters' drawings: a request's paths through each environment, and Redis's ratios to native with
their intervals."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse import littles_law
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures import latency as latency_figures
from kitlib.analyse.figures import littles_law as law_figures
from kitlib.analyse.figures import net_block as block_figures
from kitlib.analyse.figures import redis as redis_figures
from kitlib.analyse.figures.style import env_style, readable_log_ticks
from kitlib.analyse.tour import findings, points
from kitlib.core import latency_analysis

# -- a request's three paths ---------------------------------------------------------------------------
PATHS = {
    "native / Docker --net=host": ["client", "host NIC +\nTCP/IP stack", "server process"],
    "Docker NAT (bridge + -p)": [
        "client",
        "host TCP/IP stack",
        "iptables DNAT\n(conntrack)",
        "docker0 bridge",
        "veth pair",
        "container's netns\nTCP/IP stack",
        "server process",
    ],
    "VM (virtio-net)": [
        "client",
        "host TCP/IP stack",
        "tap device\n(+ forwarding)",
        "vhost-net / QEMU\nvirtio queues",
        "guest kernel\nTCP/IP stack",
        "server process",
    ],
}


def paths_diagram():
    """Boxes and arrows: what each environment puts between the client and the server (one lane each)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(12, 4.6), constrained_layout=True)
    colours = {
        "native / Docker --net=host": "#222222",
        "Docker NAT (bridge + -p)": "#ff7f0e",
        "VM (virtio-net)": "#2ca02c",
    }
    for lane, (name, hops) in enumerate(PATHS.items()):
        y = 2 - lane
        ax.text(-0.65, y, name, ha="right", va="center", fontsize=10, fontweight="bold", color=colours[name])
        step = 7.0 / max(len(hops) - 1, 1)
        for i, hop in enumerate(hops):
            x = i * step
            extra = hop not in ("client", "server process", "host NIC +\nTCP/IP stack", "host TCP/IP stack")
            ax.add_patch(
                FancyBboxPatch(
                    (x - 0.5, y - 0.28),
                    1.0,
                    0.56,
                    boxstyle="round,pad=0.02",
                    facecolor="#fde9d9" if extra else "#eeeeee",
                    edgecolor=colours[name],
                )
            )
            ax.text(x, y, hop, ha="center", va="center", fontsize=7)
            if i:
                ax.annotate("", (x - 0.52, y), (x - step + 0.52, y), arrowprops={"arrowstyle": "->"})
    ax.text(3.5, -0.75, "shaded: hops the environment adds to every request (and every response, in reverse)",
            ha="center", fontsize=8, color="grey")  # fmt: skip
    ax.set_xlim(-3.6, 7.7)
    ax.set_ylim(-1.0, 2.6)
    ax.axis("off")
    ax.set_title("The path of one request from the client to the server")
    return fig


# -- figures of the chapters ---------------------------------------------------------------------------
def ratio_intervals(df: pd.DataFrame, metric: str = "throughput"):
    """Redis: each environment's ratio to native per connection count, with its 95% interval (one host's
    records: the figure names it)."""
    import matplotlib.pyplot as plt

    host = hosts.host_of(df, "tour.ratio_intervals")

    table = points.redis_ratios(df, metric)
    fig, ax = plt.subplots(figsize=(8, 4), constrained_layout=True)
    for env, part in table.groupby("env", sort=False):
        ax.errorbar(part["clients"], part["ratio"], yerr=[part["ratio"] - part["low"], part["high"] - part["ratio"]],
                    capsize=3, label=env, **env_style(env))  # fmt: skip

    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    clients = sorted(table["clients"].unique())
    ax.set_xticks(clients, [f"{c:g}" for c in clients])
    ax.set_yscale("log")
    readable_log_ticks(ax.yaxis)
    ax.set_xlabel("client connections (pipeline 10)")
    ax.set_ylabel(f"{metric} / native (95% interval, log scale)")
    ax.set_title("Redis: ratio to native with its interval")
    ax.grid(True, alpha=0.3, which="both")
    if not table.empty:
        ax.legend(fontsize=8)
    hosts.stamp(fig, df, hosts.CI95, host)
    return fig, table


def littles_law_figure(df: pd.DataFrame):
    """X·R ÷ N against N for the paper's closed-loop servers (Redis, MySQL; else the closed loops the records
    hold): a gap that grows with N and one
    that stays the same look different here, where a log-log plot of X·R against N would hide a 10% gap."""
    table = littles_law.check(df)
    table = table[table["experiment"].isin(findings.closed_loops(table))] if not table.empty else table
    if table.empty:
        return _absent("closed-loop points")
    return law_figures.figure(table, df, littles_law.TOLERANCE)


# -- the chapters' figures of the kit, each drawn only where the records hold what it shows ------------
def _absent(what: str) -> None:
    print(f"no {what} in these records: nothing to draw")


def redis_figure(df: pd.DataFrame):
    """Chapter 1: Redis throughput and mean latency against connections (the paper's Figs. 8 and 9)."""
    rows = df[df["experiment"] == "redis"]
    return redis_figures.throughput_latency(rows) if not rows.empty else _absent("Redis records")


def cdf_figure(df: pd.DataFrame):
    """Chapter 2: the latency study's round-trip CDF per environment (its Fig. 1)."""
    present = ((df["workload"] == "shares") & (df["metric"] == "latency_percentile")).any()
    return latency_figures.latency_cdf(df) if present else _absent("latency percentiles of the part `shares`")


def block_figure(df: pd.DataFrame):
    """Chapter 2: fio's sequential, random and latency jobs (the paper's Figs. 5–7)."""
    rows = df[df["experiment"] == "block"]
    return block_figures.block(rows) if not rows.empty else _absent("fio records")


def quota_figure(df: pd.DataFrame):
    """Chapter 4: requests over 1 ms and the p99 against the quota, the predicted knee dotted (the study's Fig. 2)."""
    present = not latency_analysis.quota_table(df).empty
    return latency_figures.quota_figure(df) if present else _absent("quota sweep")
