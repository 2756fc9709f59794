"""An interactive explorer for notebooks: pick experiment, workload, metric and environments; see plot and table.

It never pools: one workload at a time, one panel per host (its name and whether it is a VM guest on the
panel), and records that differ in a configuration column are separate series, labelled with what
differs. Configuration columns are those the experiment's schema declares (its sweep and series) plus
any other parameter that still differs within them; run bookkeeping, measurement quality and the kit's
program facts (`kitlib.core.records`) never split a group. A group of one run is drawn without an error bar
and says n = 1. Under papermill (no widget front end; run with `interactive = False`) it degrades to a
static plot and table of the first choice.
"""

from __future__ import annotations

import textwrap

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import hosts
from kitlib.analyse.figures.style import env_label, env_order, env_style, readable_log_ticks, unit_label
from kitlib.core.records import BOOKKEEPING_COLUMNS, CORE_COLUMNS, PROGRAM_FACT_COLUMNS

#: never a configuration: the record's own columns, run bookkeeping and measurement quality, the host and
#: its run folder (each host has a panel of its own), and the kit's program facts unless a schema declares one
NOT_CONFIGURATION = BOOKKEEPING_COLUMNS | set(CORE_COLUMNS) | {"host", "source"} | PROGRAM_FACT_COLUMNS


def _choices(df: pd.DataFrame, experiment: str, workload: str | None = None) -> tuple[list[str], list[str], list[str]]:
    """(workloads, environments, metrics) of an experiment (of one workload where given)."""
    part = df[df["experiment"] == experiment]
    workloads = sorted(part["workload"].dropna().unique())
    if workload in workloads:
        part = part[part["workload"] == workload]
    return workloads, sorted(part["env"].unique()), sorted(part["metric"].unique())


def default_metric(df: pd.DataFrame, experiment: str, workload: str | None = None) -> str | None:
    """The metric to show first: the one most environments measured (then the most records), so the first
    view is never a metric only one environment has (start-up's VM boot)."""
    part = df[df["experiment"] == experiment]
    if workload is not None and workload in set(part["workload"]):
        part = part[part["workload"] == workload]
    if part.empty:
        return None
    counts = part.groupby("metric").agg(envs=("env", "nunique"), records=("value", "size"))
    return str(counts.sort_values(["envs", "records"], ascending=False, kind="stable").index[0])


def _varies(part: pd.DataFrame, column: str) -> bool:
    return column in part.columns and part[column].notna().any() and part[column].nunique(dropna=False) > 1


def _x_column(part: pd.DataFrame, experiment: str, workload: str | None) -> str | None:
    """The x axis: the percentile of a distribution's records, else the column the workload sweeps (as its
    experiment declares it), when these records hold more than one value of it."""
    declared = specs.schema(experiment).workload(workload).sweep
    for column in ("percentile", declared):
        if column and _varies(part, column):
            return column
    return None


def configuration(part: pd.DataFrame, experiment: str, workload: str | None, x: str | None) -> list[str]:
    """Columns that make series: the schema's sweep, series and headline columns that take several values
    here, then any other column that still differs within one host, environment and those (a parameter
    the schema does not name is shown, never averaged over). Bookkeeping never counts."""
    schema = specs.schema(experiment).workload(workload)
    declared = [c for c in dict.fromkeys((schema.sweep, *schema.series, *schema.headline)) if c and c != x]
    found = [c for c in declared if _varies(part, c)]
    within = ["host", "env", *found, *([x] if x else [])]
    within = [c for c in within if c in part.columns]
    for column in part.columns:
        if column in NOT_CONFIGURATION or column in found or column == x or column in declared:
            continue
        if part[column].notna().any() and (part.groupby(within, dropna=False)[column].nunique(dropna=False) > 1).any():
            found.append(column)
    return found


#: markers that tell one environment's series apart (its colour is the environment's)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _label(env: str, config: list[str], values: tuple) -> str:
    suffix = ", ".join(f"{c}={v}" for c, v in zip(config, values, strict=True))
    return f"{env_label(env)} {suffix}".strip()


def _n(counts: pd.Series) -> str:
    low, high = int(counts.min()), int(counts.max())
    return f"n={low}" if low == high else f"n={low}–{high}"


def _panel(ax, table: pd.DataFrame, config: list[str], x: str | None) -> None:
    """One host's groups: bars (or a line per series along x), sd error bars where n ≥ 2, n written."""
    if x is None:
        labels = [_label(row.env, config, tuple(getattr(row, c) for c in config)) for row in table.itertuples()]
        positions = range(len(table))
        ax.bar(
            positions,
            table["mean"],
            yerr=table["std"],
            capsize=3,
            color=[env_style(e)["color"] for e in table["env"]],
            hatch=["//" if "qemu-tcg" in e else None for e in table["env"]],
        )
        tops = table["mean"] + table["std"].fillna(0)
        for position, top, count in zip(positions, tops, table["count"], strict=True):
            ax.annotate(
                f"n={count}", (position, top), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=7
            )
        ax.set_xticks(list(positions), labels, rotation=20, ha="right", fontsize=7)
        return
    for env in env_order(table):
        groups = table[table["env"] == env].groupby(config or ["env"], dropna=False, sort=True)
        for k, (values, rows) in enumerate(groups):
            values = values if isinstance(values, tuple) else (values,)
            ax.errorbar(
                rows[x],
                rows["mean"],
                yerr=rows["std"],
                capsize=3,
                label=f"{_label(env, config, values[: len(config)])} ({_n(rows['count'])})",
                **{**env_style(env), "marker": MARKERS[k % len(MARKERS)]},  # one colour per environment
            )
    ax.set_xlabel(x)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def show(df: pd.DataFrame, experiment: str, envs: list[str], metric: str, workload: str | None = None):
    """One static view: the metric per environment and configuration (against the swept parameter if any),
    one panel per host; returns (Figure, table of mean, std and count per host and group)."""
    import matplotlib.pyplot as plt

    part = df[(df["experiment"] == experiment) & df["env"].isin(envs) & (df["metric"] == metric)]
    workload = workload if workload in set(part["workload"]) else (sorted(part["workload"].unique()) or [None])[0]
    part = hosts.with_hosts(part[part["workload"] == workload].dropna(axis=1, how="all"))
    if part.empty:
        fig, ax = plt.subplots(figsize=(8, 5), constrained_layout=True)
        ax.set_title(f"no {metric} records for {experiment}")
        return fig, part
    unit = unit_label(part["unit"].iloc[0])
    x = _x_column(part, experiment, workload)
    config = configuration(part, experiment, workload, x)
    keys = ["host", "env", *config, *([x] if x else [])]
    table = part.groupby(keys, dropna=False)["value"].agg(["mean", "std", "count"]).reset_index()
    machines = hosts.by_host(part)
    fig, axes = plt.subplots(
        len(machines), 1, figsize=(10, 4.2 * len(machines)), constrained_layout=True, squeeze=False
    )
    for ax, (host, own) in zip(axes[:, 0], machines, strict=True):
        rows = table[table["host"].astype(str) == host]
        _panel(ax, rows, config, x)
        means = rows["mean"][rows["mean"] > 0]
        if len(means) and means.max() / means.min() > 50:  # an emulator's scale would flatten the rest
            ax.set_yscale("log")
            readable_log_ticks(ax.yaxis)
        ax.set_title(textwrap.fill(hosts.describe(own, host), 110), fontsize=8)
        ax.set_ylabel(f"{metric} ({unit})")
    fig.suptitle(f"{experiment} / {workload}: {metric}, mean per group\n{hosts.SD}", fontsize=9)
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
    first = default_metric(df, experiments[0], workloads[0]) or metrics[0]
    if not interactive:
        fig, table = show(df, experiments[0], envs, first, workloads[0])
        display(table)
        return fig
    import ipywidgets as widgets

    pick_experiment = widgets.Dropdown(options=experiments, description="experiment")
    pick_workload = widgets.Dropdown(options=workloads, description="workload")
    pick_envs = widgets.SelectMultiple(options=envs, value=tuple(envs), description="envs")
    pick_metric = widgets.Dropdown(options=metrics, value=first, description="metric")
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
            pick_metric.value = default_metric(df, pick_experiment.value, pick_workload.value) or metrics_now[0]
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
    display(_with_static_view(box, df, experiments[0], envs, first, workloads[0]), raw=True)
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
