"""Redis (paper Figs. 8–9): throughput and mean latency against client connections."""

from __future__ import annotations

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import readable_log_ticks, shared_legend, sweep_axes

SCHEMA = specs.schema("redis")


@hosts.one_host(hosts.SD)
def throughput_latency(df):
    """The paper's Figures 8 and 9 side by side: throughput and mean latency vs connections."""
    import matplotlib.pyplot as plt

    df = SCHEMA.headline_rows(df)
    x = SCHEMA.workload("redis").sweep
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    sweep_axes(left, df, x, "throughput", "throughput (k requests/s)", scale=1e-3)
    sweep_axes(right, df, x, "latency_mean", "mean latency (µs, log scale)")
    right.set_yscale("log")  # an emulator's milliseconds would flatten native, host and NAT onto the floor
    readable_log_ticks(right.yaxis)
    ticks = sorted(df[x].dropna().unique()) if x in df else []
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [str(int(t)) for t in ticks])
        ax.set_xlabel(f"client connections ({pipeline_text(df)})")
    left.set_title("Redis throughput (Fig. 8)")
    right.set_title("Redis mean latency (Fig. 9)")
    shared_legend(fig, (left, right))
    return fig


def pipeline_text(df) -> str:
    """The records' own pipeline depth for the axis label: one value, or the values drawn together."""
    depths = sorted(int(v) for v in df["pipeline"].dropna().unique()) if "pipeline" in df else []
    if not depths:
        return "pipeline not recorded"
    return f"pipeline {depths[0]}" if len(depths) == 1 else f"pipelines {', '.join(map(str, depths))}"
