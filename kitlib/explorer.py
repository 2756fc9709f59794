"""An interactive explorer for notebooks: pick experiment, environments and metric; see plot and table.

Under papermill (no widget front end; run with `interactive = False`) it degrades to a static plot
and table of the first choice.
"""

from __future__ import annotations

import pandas as pd


def _choices(df: pd.DataFrame, experiment: str) -> tuple[list[str], list[str]]:
    part = df[df["experiment"] == experiment]
    return sorted(part["env"].unique()), sorted(part["metric"].unique())


def _x_column(part: pd.DataFrame) -> str | None:
    for column in ("clients", "threads", "quota", "size_kb", "size_mb", "layers", "percentile"):
        if column in part.columns and part[column].notna().any() and part[column].nunique() > 1:
            return column
    return None


def show(df: pd.DataFrame, experiment: str, envs: list[str], metric: str):
    """One static view: the metric per environment (against the swept parameter if there is one)."""
    import matplotlib.pyplot as plt

    from kitlib import plots

    part = df[(df["experiment"] == experiment) & df["env"].isin(envs) & (df["metric"] == metric)]
    if "op" in part.columns and (part["op"] == "mix").any():
        part = part[part["op"] == "mix"]
    x = _x_column(part)
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    if part.empty:
        ax.set_title(f"no {metric} records for {experiment}")
        return fig, part
    unit = part["unit"].iloc[0]
    if x is None:
        table = part.groupby("env")["value"].agg(["mean", "std", "count"])
        ax.bar(table.index, table["mean"], yerr=table["std"].fillna(0), capsize=3)
        ax.tick_params(axis="x", labelrotation=20)
    else:
        plots.sweep_axes(ax, part, x, metric, f"{metric} ({unit})")
        ax.legend(fontsize=8)
        table = part.groupby(["env", x])["value"].agg(["mean", "std", "count"])
    ax.set_title(f"{experiment}: {metric}")
    ax.set_ylabel(f"{metric} ({unit})")
    return fig, table.reset_index()


def explore(df: pd.DataFrame, interactive: bool = True):
    """Widgets where a front end can show them (`interactive`); a static view of the first choice always,
    so an executed notebook (papermill) keeps a plot and a table."""
    from IPython.display import display

    experiments = sorted(df["experiment"].unique())
    if not experiments:
        print("no records to explore")
        return None
    envs, metrics = _choices(df, experiments[0])
    if not interactive:
        fig, table = show(df, experiments[0], envs, metrics[0])
        display(table)
        return fig
    import ipywidgets as widgets

    pick_experiment = widgets.Dropdown(options=experiments, description="experiment")
    pick_envs = widgets.SelectMultiple(options=envs, value=tuple(envs), description="envs")
    pick_metric = widgets.Dropdown(options=metrics, description="metric")
    out = widgets.Output()

    def refresh(*_):
        envs_now, metrics_now = _choices(df, pick_experiment.value)
        if list(pick_envs.options) != envs_now:
            pick_envs.options, pick_envs.value = envs_now, tuple(envs_now)
        if list(pick_metric.options) != metrics_now:
            pick_metric.options = metrics_now
        with out:
            import matplotlib.pyplot as plt

            out.clear_output(wait=True)
            fig, table = show(df, pick_experiment.value, list(pick_envs.value), pick_metric.value)
            plt.show(fig)
            display(table)

    for widget in (pick_experiment, pick_envs, pick_metric):
        widget.observe(refresh, names="value")
    refresh()
    display(widgets.VBox([widgets.HBox([pick_experiment, pick_metric]), pick_envs, out]))
    return None
