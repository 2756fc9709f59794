"""The paper's Table I analogue: mean ± standard deviation per environment and workload, and the
ratio to native, written as CSV, Markdown and LaTeX."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kitlib.analyse import design_spread
from kitlib.analyse.figures import hosts
from kitlib.core import paths

#: workload -> (metric, filter column, filter value, label) rows of Table I
TABLE_ONE_ROWS = (
    ("pxz", "throughput", None, None, "PXZ (MB/s)"),
    ("linpack", "gflops", None, None, "Linpack (GFLOPS)"),
    ("stream", "bandwidth", "kernel", "Triad", "STREAM Triad (GB/s)"),
    ("randomaccess", "gups", "variant", "System", "RandomAccess (GUPS)"),
)


def table_one(df: pd.DataFrame) -> pd.DataFrame:
    """Rows: the four benchmarks per host; columns: mean, sd, n and the ratio to the same host's native
    (two machines' runs never share a cell or a ratio)."""
    rows = []
    for host, own, design in _hosts_and_designs(df):
        described = hosts.describe(own, host)
        for workload, metric, column, value, label in TABLE_ONE_ROWS:
            label = f"{label} {DUET_LABEL}" if design else label
            part = own[(own["workload"] == workload) & (own["metric"] == metric)]
            if column is not None and column in part.columns:
                part = part[part[column] == value]
            if "variant" in part.columns and workload == "stream":
                part = part[part["variant"] == "System"]
            if part.empty:
                continue
            native = part.loc[part["env"] == "native", "value"].mean()
            for env, group in part.groupby("env"):
                mean = group["value"].mean()
                ratio = mean / native if native == native else float("nan")
                if design:  # the evidence of a duet: the ratio within each duet, their geometric mean
                    ratio = _within_duets(part, env)
                rows.append(
                    {
                        "host": host,
                        "host_label": described,
                        "benchmark": label,
                        "env": env,
                        "mean": mean,
                        "sd": group["value"].std(),
                        "n": len(group),
                        "ratio_to_native": ratio,
                    }
                )
    return pd.DataFrame(rows)


#: how Table I names a duet run's rows (`kitlib.measure.run.duet`)
DUET_LABEL = "[duet: half-machine points, ratio within each duet]"


def _hosts_and_designs(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame, bool]]:
    """Each host's records, the points measured one at a time apart from the duet points (True)."""
    found = []
    for host, own in hosts.by_host(df) if not df.empty else []:
        in_duet = own["duet"].notna() if "duet" in own.columns else pd.Series(False, index=own.index)
        found += [(host, part, design) for design, part in ((False, own[~in_duet]), (True, own[in_duet])) if len(part)]
    return found


def _within_duets(part: pd.DataFrame, env: str) -> float:
    """The geometric mean of `env`'s ratio to native within each duet holding both (NaN: none)."""
    import numpy as np

    d = design_spread.log_ratios(part, env, "native")
    return float(np.exp(d.mean())) if len(d) else float("nan")


def as_cells(table: pd.DataFrame) -> pd.DataFrame:
    """`mean ± sd (ratio)` strings (`mean (ratio), n=1` for one run), benchmarks as rows and environments as
    columns, as the paper prints it; a host's rows are its own (index: host, benchmark)."""
    if table.empty:
        return table
    cells = table.assign(
        cell=[
            f"{m:.3g} ± {s:.2g} ({r:.2f})" if n > 1 else f"{m:.3g} ({r:.2f}), n=1"
            for m, s, r, n in zip(table["mean"], table["sd"], table["ratio_to_native"], table["n"], strict=True)
        ]
    )
    return cells.pivot(index=["host", "benchmark"], columns="env", values="cell")


def write(table: pd.DataFrame, name: str = "table1", folder: str | Path | None = None) -> list[Path]:
    """CSV (a `host` column), Markdown and LaTeX with one section per host, each named by its description."""
    folder = Path(folder) if folder else paths.results_root() / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / f"{name}.csv", folder / f"{name}.md", folder / f"{name}.tex"]
    table.to_csv(written[0], index=False)
    markdown, latex = [], []
    for host, cells in as_cells(table).groupby(level="host") if not table.empty else []:
        cells = cells.droplevel("host").dropna(axis=1, how="all")
        line = table.loc[table["host"] == host, "host_label"].iloc[0]
        markdown += [f"### {line}", "", cells.to_markdown(), ""]
        latex += [f"% {line}", cells.to_latex(), ""]
    written[1].write_text("\n".join(markdown) if markdown else "(no records)\n")
    written[2].write_text("\n".join(latex) if latex else "% no records\n")
    return written
