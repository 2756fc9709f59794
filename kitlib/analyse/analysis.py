"""What the analysis notebooks call: load records from any folders, tables across runs, every figure
the records allow, the claims beside the papers' numbers, and the one-page summary.

Reads records only (never raw tool output), so it runs on data/sample/, on results/, or both; an
experiment without records is a section that says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from kitlib import specs
from kitlib.analyse import claims, figures, littles_law, paper_vs_data
from kitlib.analyse.claims.core import ENV_OPTION_COLUMNS, family_wise_text
from kitlib.core import hostfacts, paths, stats, tool_versions
from kitlib.core.hostid import FELTER2014, describe_host, host_id
from kitlib.core.parameters import as_list
from kitlib.core.records import BOOKKEEPING_COLUMNS
from kitlib.results import load_records

NOT_DIMENSIONS = BOOKKEEPING_COLUMNS


def load(
    results_dirs: Sequence[str | Path] | None = None,
    environments: Sequence[str] | None = None,
    hosts: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Records of every run under the given folders (default: results/; each the results folder, an
    experiment's or a run's), optionally only some environments or hosts; each argument in any form
    `kitlib.core.parameters` reads. Each record names its `host`; folders of several machines stay apart."""
    frame = load_records(*paths.resolve_results_dirs(results_dirs))
    environments = as_list("environments", environments)
    if environments:
        frame = frame[frame["env"].isin(environments)]
    hosts = as_list("hosts", hosts)
    if hosts and "host" in frame.columns:
        frame = frame[frame["host"].isin(hosts)]
    return frame.reset_index(drop=True)


def by_verdict(verdicts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The verdict table split by verdict, reproduced first (`claims.STATUSES`), each part in claim
    order: every row is in one part, so a notebook that shows the parts shows every claim."""
    order = [s for s in claims.STATUSES if (verdicts["status"] == s).any()]
    order += sorted(set(verdicts["status"].astype(str)) - set(order))
    return {status: verdicts[verdicts["status"] == status].reset_index(drop=True) for status in order}


def dimensions(df: pd.DataFrame) -> list[str]:
    """The columns that say which configuration a record belongs to (all but value and run bookkeeping;
    `host` first, so that records of different machines are never pooled)."""
    found = [c for c in df.columns if c not in NOT_DIMENSIONS and df[c].notna().any()]
    return sorted(found, key=lambda c: c != "host")


def statistics_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std, median, min, max, n and 95% interval per configuration and host, and per version of the
    tools where records name them (runs of two versions are two rows, never one mean); each host's rows
    are labelled with its description where provenance gives one (`host_label`)."""
    versions = (
        [tool_versions.COLUMN] if tool_versions.COLUMN in df.columns and df[tool_versions.COLUMN].notna().any() else []
    )
    table = stats.summarize(df, by=dimensions(df) + versions)
    if "host" in table.columns and "source" in df.columns:
        labels = host_labels(df)
        table.insert(table.columns.get_loc("host") + 1, "host_label", table["host"].map(labels))
    return table


def host_labels(df: pd.DataFrame) -> dict[str, str]:
    """host id -> `describe_host` line, from the provenance of the folders the records came from."""
    import json

    labels: dict[str, str] = {}
    for source in df["source"].dropna().unique() if "source" in df.columns else []:
        try:
            sessions = json.loads((Path(source) / "provenance.json").read_text()).get("sessions") or []
        except (OSError, ValueError):
            continue
        for session in sessions:
            for host in [session.get("host"), *(session.get("sut_hosts") or {}).values()]:
                if host:
                    labels.setdefault(host_id(host), describe_host(host))
    return labels


def overhead_table(df: pd.DataFrame, baseline_env: str = "native", allow_mixed_versions: bool = False) -> pd.DataFrame:
    """Every environment against the baseline per configuration: ratio, interval, test, verdict, and the
    tool versions that differ (a side pooling two versions is not compared unless `allow_mixed_versions`).
    Options an environment label carries (quota, shares, filesystem, numa, …) are part of the environment,
    so they never make a configuration differ from the baseline's."""

    if "source" in df.columns and not df.empty:
        df = hostfacts.with_host(df)  # records of different machines are never compared
    by = [c for c in dimensions(df) if c != "env" and c not in ENV_OPTION_COLUMNS]
    return stats.compare(df, by=by, baseline_env=baseline_env, allow_mixed_versions=allow_mixed_versions)


def by_experiment(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: part.dropna(axis=1, how="all") for name, part in df.groupby("experiment")}


def render_figures(df: pd.DataFrame, figures_dir: str | Path | None = None) -> dict[str, list[Path]]:
    """Every figure the records allow, one file per figure and host, saved as PNG and PDF; {name: paths}."""
    import matplotlib.pyplot as plt

    written: dict[str, list[Path]] = {}
    for experiment in sorted(df["experiment"].unique()) if not df.empty else []:
        written.update(figures.render(df, experiment, figures_dir, close=True))

    for host, own in figures.hosts.by_host(df) if not df.empty else []:
        if figures.placement.has_placement_runs(own):
            figure = figures.placement.placement_figure(own)
            name = figures.file_name(figures.placement.FIGURE, host, own)
            written[name] = figures.save(figure, name, figures_dir)
            plt.close(figure)
    return written


def littles_law_table(df: pd.DataFrame, tolerance: float = littles_law.TOLERANCE) -> pd.DataFrame:
    return littles_law.check(df, tolerance)


def claims_table(df: pd.DataFrame, experiment: str | None = None, allow_mixed_versions: bool = False) -> pd.DataFrame:
    """Every claim's verdict per host (only the experiment's where one is named), with the environment
    names made honest (see `honest_labels`); runs of differing tool versions are pooled only when
    `allow_mixed_versions` (`kitlib.analyse.claims.versions`)."""
    table = claims.evaluate_all(df, experiment, allow_mixed_versions)
    if df.empty or "source" not in df.columns:
        return table
    with_host = hostfacts.with_host(df)
    for host, part in with_host.groupby("host"):
        mask = table["host"] == host
        table.loc[mask, "statement"] = [honest_labels(s, part) for s in table.loc[mask, "statement"]]
    return table


def honest_labels(text: str, df: pd.DataFrame) -> str:
    """`native` becomes `native (a VM guest)` where the records' provenance says the host is a VM; overlay
    names the storage driver the runs used (e.g. overlay2)."""
    import re

    if hostfacts.is_vm_guest(df):
        text = re.sub(r"\b(native|bare metal)\b", "native (a VM guest)", text)
    drivers = sorted(hostfacts.storage_drivers(df))
    if drivers and not any(d in text for d in drivers):
        text = re.sub(r"\b([Oo]verlay)\b", lambda m: f"{m.group(1)} ({', '.join(drivers)})", text, count=1)
    return text


def write_summary(
    verdicts: pd.DataFrame, figures: dict[str, list[Path]], path: str | Path, sources: Sequence[str | Path] = ()
) -> Path:
    """A one-page Markdown summary: each claim's verdict with its reason, and links to the figures."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    counts = verdicts["status"].value_counts()
    lines = ["# Which claims reproduced on this host", ""]
    if sources:
        lines += ["Records from: " + ", ".join(f"`{s}`" for s in as_list("sources", list(sources))), ""]
    lines += [
        ", ".join(f"**{counts.get(s, 0)}** {s}" for s in claims.STATUSES),
        "",
        f"**Error rate:** {family_wise_text(verdicts['status'])}.",
        "",
        "A verdict is decided on the interval of the effect against the band the paper states: at 95%, or "
        "wider on a run grown until decided, which keeps 95% over all its looks; the evidence gives both "
        "and the level. Fewer than 3 runs a side is never decided.",
        "",
    ]
    if counts.get(claims.INCONCLUSIVE, 0):
        lines += [
            "`kit reproduce --dry-run --budget 90m` reads these runs and says what a longer budget would likely "
            "decide on this host, and which inconclusive claims no schedule of repetitions would.",
            "",
        ]
    lines += [
        "| claim | host | verdict | evidence | source |",
        "|---|---|---|---|---|",
    ]
    for _, row in verdicts.iterrows():
        reason = str(row["reason"]).replace("|", "/")
        host = row["host"] if "host" in verdicts.columns else ""
        lines.append(f"| {row['statement']} | {host} | **{row['status']}** | {reason} | {row['source']} |")
    lines += ["", *reference_host_sections(verdicts)]
    lines += ["", "## Figures", ""]
    for name, files in sorted(figures.items()):
        png = next((f for f in files if f.suffix == ".png"), files[0])
        lines.append(f"- [{name}]({_relative(png, path.parent)})")
    if not figures:
        lines.append("(no figures: no records)")
    path.write_text("\n".join(lines) + "\n")
    return path


def reference_host_sections(verdicts: pd.DataFrame) -> list[str]:
    """Where imported authors' data are among the records (`kit import felter2014`): the claims on which
    the paper's text and those data disagree, with both numbers."""
    if "host" not in verdicts.columns or FELTER2014 not in set(verdicts["host"].astype(str)):
        return []
    table = paper_vs_data.compare(verdicts, FELTER2014)
    return paper_vs_data.markdown(table, FELTER2014)


def _relative(target: Path, start: Path) -> str:
    import os

    return os.path.relpath(Path(target).resolve(), Path(start).resolve())


def without_records(df: pd.DataFrame) -> list[str]:
    """Experiments that declare figures but have no records here (so no figures were drawn for them)."""
    present = set(df["experiment"]) if "experiment" in df.columns else set()
    return [name for name in specs.names() if specs.schema(name).figures and name not in present]


def sweep_table(df: pd.DataFrame, experiment: str, metrics: Sequence[str], workload: str | None = None) -> pd.DataFrame:
    """Mean and standard deviation of each metric per host and environment along the workload's swept column (as
    its experiment declares it), on the rows that stand for a point; `<metric>` and `<metric>_sd`."""
    schema = specs.schema(experiment)
    rows = schema.headline_rows(df[df["experiment"] == experiment])
    if rows.empty:
        return pd.DataFrame()
    workload = workload or str(rows["workload"].iloc[0])
    host = ["host"] if "host" in rows.columns else []  # two machines' runs never share a row
    keys = [*host, "env", *[c for c in [schema.workload(workload).sweep] if c]]
    rows = rows[(rows["workload"] == workload) & rows["metric"].isin(metrics)]
    table = rows.pivot_table(index=keys, columns="metric", values="value", aggfunc=["mean", "std"])
    columns = {("mean", m): m for m in metrics} | {("std", m): f"{m}_sd" for m in metrics}
    table.columns = [columns[c] for c in table.columns]
    return table[[c for m in metrics for c in (m, f"{m}_sd") if c in table.columns]].reset_index()
