"""Start-up (paper §II and conclusion): container start against VM boot, to ready for commands."""

from __future__ import annotations

from kitlib.figures.style import grouped_bars


def startup_figure(df):
    """Start-to-ready per environment, log scale (container start vs VM boot, the paper's < 1 s vs 11 s)."""
    import matplotlib.pyplot as plt

    rows = df[df["metric"].isin(["start_to_ready", "boot_to_ready"])]
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    grouped_bars(ax, rows, "metric", ["start_to_ready", "boot_to_ready"], "seconds (mean ± sd)")
    ax.set_yscale("log")
    ax.set_title("Start-up: container start vs VM boot to ready")
    return fig
