"""Start-up (paper §II and conclusion): container start against VM boot, to ready for commands."""

from __future__ import annotations

from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import grouped_bars, shared_legend


@hosts.one_host(hosts.SD)
def startup_figure(df):
    """Start-to-ready per environment on a linear axis (container start vs VM boot, the paper's < 1 s vs
    11 s): a log axis would shrink the very gap the paper reports."""
    import matplotlib.pyplot as plt

    rows = df[df["metric"].isin(["start_to_ready", "boot_to_ready"])]
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    grouped_bars(ax, rows, "metric", ["start_to_ready", "boot_to_ready"], "seconds (mean ± sd)", values="{:.2g} s")
    ax.set_ylim(bottom=0)
    ax.set_title("Start-up: container start vs VM boot to ready")
    shared_legend(fig, [ax], ncol=2)
    return fig
