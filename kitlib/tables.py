"""The paper's Table I analogue: mean ± standard deviation per environment and workload, and the
ratio to native, written as CSV, Markdown and LaTeX."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kitlib import paths

#: workload -> (metric, filter column, filter value, label) rows of Table I
TABLE_ONE_ROWS = (
    ("pxz", "throughput", None, None, "PXZ (MB/s)"),
    ("linpack", "gflops", None, None, "Linpack (GFLOPS)"),
    ("stream", "bandwidth", "kernel", "Triad", "STREAM Triad (GB/s)"),
    ("randomaccess", "gups", "variant", "System", "RandomAccess (GUPS)"),
)


def table_one(df: pd.DataFrame) -> pd.DataFrame:
    """Rows: the four benchmarks; columns per environment: mean, sd, n and the ratio to native."""
    rows = []
    for workload, metric, column, value, label in TABLE_ONE_ROWS:
        part = df[(df["workload"] == workload) & (df["metric"] == metric)]
        if column is not None and column in part.columns:
            part = part[part[column] == value]
        if "variant" in part.columns and workload == "stream":
            part = part[part["variant"] == "System"]
        if part.empty:
            continue
        native = part.loc[part["env"] == "native", "value"].mean()
        for env, group in part.groupby("env"):
            mean = group["value"].mean()
            rows.append(
                {
                    "benchmark": label,
                    "env": env,
                    "mean": mean,
                    "sd": group["value"].std(),
                    "n": len(group),
                    "ratio_to_native": mean / native if native == native else float("nan"),
                }
            )
    return pd.DataFrame(rows)


def as_cells(table: pd.DataFrame) -> pd.DataFrame:
    """`mean ± sd (ratio)` strings, benchmarks as rows and environments as columns, as the paper prints it."""
    if table.empty:
        return table
    cells = table.assign(
        cell=[
            f"{m:.3g} ± {s:.2g} ({r:.2f})" if s == s else f"{m:.3g} ({r:.2f})"
            for m, s, r in zip(table["mean"], table["sd"], table["ratio_to_native"], strict=True)
        ]
    )
    return cells.pivot(index="benchmark", columns="env", values="cell")


def write(table: pd.DataFrame, name: str = "table1", folder: str | Path | None = None) -> list[Path]:
    folder = Path(folder) if folder else paths.results_root() / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    cells = as_cells(table)
    written = [folder / f"{name}.csv", folder / f"{name}.md", folder / f"{name}.tex"]
    table.to_csv(written[0], index=False)
    written[1].write_text(cells.to_markdown() if not cells.empty else "(no records)\n")
    written[2].write_text(cells.to_latex() if not cells.empty else "% no records\n")
    return written
