"""Memory (paper Table I's STREAM): the four kernels per environment."""

from __future__ import annotations

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import grouped_bars


@hosts.one_host(hosts.SD)
def stream_kernels(df):
    """STREAM: the four kernels per environment (GB/s, error bars = standard deviation)."""
    import matplotlib.pyplot as plt

    rows = df[(df["workload"] == "stream") & (df["metric"] == "bandwidth")]
    if "variant" in rows.columns:
        rows = rows[rows["variant"] == "System"]
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    grouped_bars(ax, rows, "kernel", ["Copy", "Scale", "Add", "Triad"], "bandwidth, all CPUs of the SUT (GB/s)")
    tools = sorted(rows["tool"].dropna().unique()) if "tool" in rows.columns else []
    ax.set_title(f"STREAM ({', '.join(tools) or 'hpcc'})")
    return fig
