"""An interactive explorer for notebooks: pick experiment, workload, metric and environments; see plot and table.

It never pools: one workload at a time, and records that differ in any other configuration column
(block size, operation, direction, …) are separate series, labelled with what differs. Under papermill
(no widget front end; run with `interactive = False`) it degrades to a static plot and table of the
first choice.
"""

from __future__ import annotations

import pandas as pd

from kitlib import experiments
from kitlib.figures.style import env_order, env_style, unit_label

#: columns that are bookkeeping or drawn on an axis, not a configuration that separates series
_NOT_CONFIGURATION = {
    "experiment",
    "env",
    "metric",
    "unit",
    "value",
    "run_id",
    "repetition",
    "source",
    "host",
    "workload",
}


def _choices(df: pd.DataFrame, experiment: str, workload: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """(workloads, environments, metrics) of an experiment (of one workload where given)."""
    part = df[df["experiment"] == experiment]
    workloads = sorted(part["workload"].dropna().unique())
    if workload in workloads:
        part = part[part["workload"] == workload]
    return workloads, sorted(part["env"].unique()), sorted(part["metric"].unique())


def _x_column(part: pd.DataFrame, experiment: str, workload: str | None) -> str | None:
    """The column the workload sweeps, as its experiment declares it (percentile for a latency
    distribution), when these records hold more than one value of it."""
    declared = experiments.schema(experiment).workload(workload).sweep
    for column in (declared, "percentile"):
        if column and column in part.columns and part[column].notna().any() and part[column].nunique() > 1:
            return column
    return None


def _configurations(part: pd.DataFrame, x: str | None) -> list[str]:
    """Columns whose values differ within one environment (and x): each value is a series of its own.
    Columns that follow from the environment (its filesystem) or from x (outstanding requests) do not split."""
    within = ["env", x] if x else ["env"]
    return [
        c
        for c in part.columns
        if c not in _NOT_CONFIGURATION
        and c != x
        and part[c].notna().any()
        and (part.groupby(within, dropna=False)[c].nunique(dropna=False) > 1).any()
    ]


def show(df: pd.DataFrame, experiment: str, envs: list[str], metric: str, workload: str | None = None):
    """One static view: the metric per environment and configuration (against the swept parameter if any)."""
    import matplotlib.pyplot as plt

    part = df[(df["experiment"] == experiment) & df["env"].isin(envs) & (df["metric"] == metric)]
    workload = workload if workload in set(part["workload"]) else (sorted(part["workload"].unique()) or [None])[0]
    part = part[part["workload"] == workload].dropna(axis=1, how="all")
    x = _x_column(part, experiment, workload)
    fig, ax = plt.subplots(figsize=(8, 5), constrained_layout=True)
    if part.empty:
        ax.set_title(f"no {metric} records for {experiment}")
        return fig, part
    unit = unit_label(part["unit"].iloc[0])
    config = _configurations(part, x)
    keys = ["env", *config]
    if x is None:
        table = part.groupby(keys, dropna=False)["value"].agg(["mean", "std", "count"]).reset_index()
        labels = [" ".join(str(v) for v in row) for row in table[keys].itertuples(index=False)]
        ax.bar(
            labels,
            table["mean"],
            yerr=table["std"].fillna(0),
            capsize=3,
            color=[env_style(e)["color"] for e in table["env"]],
        )
        ax.tick_params(axis="x", labelrotation=20)
    else:
        table = part.groupby([*keys, x], dropna=False)["value"].agg(["mean", "std", "count"]).reset_index()
        for env in env_order(table):
            for values, rows in table[table["env"] == env].groupby(config or ["env"], dropna=False):
                values = values if isinstance(values, tuple) else (values,)
                suffix = ", ".join(f"{c}={v}" for c, v in zip(config, values, strict=False)) if config else ""
                ax.errorbar(
                    rows[x],
                    rows["mean"],
                    yerr=rows["std"].fillna(0),
                    capsize=3,
                    label=f"{env} {suffix}".strip(),
                    **env_style(env),
                )
        ax.set_xlabel(x)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.15), ncol=3, frameon=False)
    means = table["mean"][table["mean"] > 0]
    if len(means) and means.max() / means.min() > 50:  # an emulator's scale would flatten the rest
        from kitlib.figures.style import readable_log_ticks

        ax.set_yscale("log")
        readable_log_ticks(ax.yaxis)
    ax.set_title(f"{experiment} / {workload}: {metric} (mean ± sd)")
    ax.set_ylabel(f"{metric} ({unit})")
    return fig, table


def explore(df: pd.DataFrame, interactive: bool = True):
    """Widgets where a front end can show them (`interactive`); a static view of the first choice always,
    so an executed notebook (papermill) keeps a plot and a table."""
    from IPython.display import display

    experiments = sorted(df["experiment"].unique())
    if not experiments:
        print("no records to explore")
        return None
    workloads, envs, metrics = _choices(df, experiments[0])
    workloads, envs, metrics = _choices(df, experiments[0], workloads[0])
    if not interactive:
        fig, table = show(df, experiments[0], envs, metrics[0], workloads[0])
        display(table)
        return fig
    import ipywidgets as widgets

    pick_experiment = widgets.Dropdown(options=experiments, description="experiment")
    pick_workload = widgets.Dropdown(options=workloads, description="workload")
    pick_envs = widgets.SelectMultiple(options=envs, value=tuple(envs), description="envs")
    pick_metric = widgets.Dropdown(options=metrics, description="metric")
    out = widgets.Output()

    def refresh(*_):
        workloads_now = _choices(df, pick_experiment.value)[0]
        if list(pick_workload.options) != workloads_now:
            pick_workload.options = workloads_now
        _, envs_now, metrics_now = _choices(df, pick_experiment.value, pick_workload.value)
        if list(pick_envs.options) != envs_now:
            pick_envs.options, pick_envs.value = envs_now, tuple(envs_now)
        if list(pick_metric.options) != metrics_now:
            pick_metric.options = metrics_now
        with out:
            import matplotlib.pyplot as plt

            out.clear_output(wait=True)
            fig, table = show(df, pick_experiment.value, list(pick_envs.value), pick_metric.value, pick_workload.value)
            plt.show(fig)
            display(table)

    for widget in (pick_experiment, pick_workload, pick_envs, pick_metric):
        widget.observe(refresh, names="value")
    refresh()
    box = widgets.VBox([widgets.HBox([pick_experiment, pick_workload, pick_metric]), pick_envs, out])
    display(_with_static_view(box, df, experiments[0], envs, metrics[0], workloads[0]), raw=True)
    return None


def _with_static_view(box, df: pd.DataFrame, experiment: str, envs: list[str], metric: str, workload: str) -> dict:
    """The widgets' display data plus a PNG of the first view: a front end without widgets (papermill's
    executed copy, nbconvert, a notebook viewer) shows the plot instead of the text `VBox(children=…)`."""
    import base64
    import io

    import matplotlib.pyplot as plt

    fig, _ = show(df, experiment, envs, metric, workload)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    bundle = dict(box._repr_mimebundle_())
    bundle["image/png"] = base64.b64encode(buffer.getvalue()).decode()
    bundle["text/plain"] = f"explorer: {experiment} / {workload}: {metric} (the widgets need a live kernel)"
    return bundle
