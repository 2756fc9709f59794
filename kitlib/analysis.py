"""What the analysis notebooks call: load records from any folders, tables across runs, every figure
the records allow, the claims beside the papers' numbers, and the one-page summary.

Reads records only (never raw tool output), so it runs on data/sample/, on results/, or both; an
experiment without records is a section that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from kitlib import claims, littles_law, paths, plots, stats
from kitlib.planning import parse_value
from kitlib.store import load_records

NOT_DIMENSIONS = {"value", "run_id", "repetition", "source"}


def load(results_dirs: Sequence[str | Path] | None = None, environments: Sequence[str] | None = None) -> pd.DataFrame:
    """Records of every run under the given folders (default: results/), optionally only some environments."""
    frame = load_records(*paths.resolve_results_dirs(as_list(results_dirs)))
    environments = as_list(environments)
    if environments:
        frame = frame[frame["env"].isin(environments)]
    return frame.reset_index(drop=True)


def as_list(value) -> list[str]:
    """A notebook parameter that may arrive as text from `papermill -p` (`'["a", "b"]'` or `a`)."""
    value = parse_value(value)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def dimensions(df: pd.DataFrame) -> list[str]:
    """The columns that say which configuration a record belongs to (all but value and run bookkeeping)."""
    return [c for c in df.columns if c not in NOT_DIMENSIONS and df[c].notna().any()]


def statistics_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std, median, min, max, n and 95% interval per configuration."""
    return stats.summarize(df, by=dimensions(df))


def overhead_table(df: pd.DataFrame, baseline_env: str = "native") -> pd.DataFrame:
    """Every environment against the baseline per configuration: ratio, interval, test, verdict."""
    by = [c for c in dimensions(df) if c != "env"]
    return stats.compare(df, by=by, baseline_env=baseline_env)


def by_experiment(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: part.dropna(axis=1, how="all") for name, part in df.groupby("experiment")}


def _redis_figures(df: pd.DataFrame) -> dict[str, object]:
    return {"redis-fig8-9-throughput-latency": plots.redis_throughput_latency(df)}


def _latency_figures(df: pd.DataFrame) -> dict[str, object]:
    from kitlib import figures_latency, latency_analysis

    found: dict[str, object] = {}
    if (df["workload"] == "shares").any():
        found["latency-fig1-cdf-shares"] = figures_latency.latency_cdf(df)
    quota = latency_analysis.quota_table(df)
    if not quota.empty:
        found["latency-fig2-quota"] = figures_latency.slow_requests_vs_quota(
            quota, latency_analysis.unthrottled_utilization(quota)
        )
    if (df["workload"] == "bridge").any():
        found["latency-fig3-bridge"] = figures_latency.bridge_vs_host(df)
    if df["workload"].isin(["storage", "copy_up", "layers"]).any():
        found["latency-fig4-6-storage"] = figures_latency.storage_operations(df)
    return found


def _memory_figures(df: pd.DataFrame) -> dict[str, object]:
    return {"memory-stream-kernels": plots.stream_kernels(df)} if (df["workload"] == "stream").any() else {}


#: experiment -> function(records of that experiment) -> {figure name: Figure}
FIGURES: dict[str, Callable[[pd.DataFrame], dict[str, object]]] = {
    "redis": _redis_figures,
    "latency": _latency_figures,
    "memory": _memory_figures,
    "net": lambda df: {"net-fig2-3-throughput-cpu-rtt": _io().network(df)},
    "block": lambda df: {"block-fig5-7-sequential-random-latency": _io().block(df)},
    "mysql": lambda df: {"mysql-fig10-13": __import__("kitlib.figures_mysql").figures_mysql.mysql_figures(df)},
    "startup": lambda df: {"startup-time": _startup().startup_figure(df)},
}


def _startup():
    from kitlib.experiments import startup

    return startup


def _io():
    from kitlib import figures_io

    return figures_io


def render_figures(df: pd.DataFrame, figures_dir: str | Path | None = None) -> dict[str, list[Path]]:
    """Every figure the records allow, saved as PNG and PDF; {name: paths}."""
    import matplotlib.pyplot as plt

    written: dict[str, list[Path]] = {}
    for experiment, part in by_experiment(df).items():
        make = FIGURES.get(experiment)
        if make is None:
            continue
        for name, figure in make(part).items():
            written[name] = plots.save(figure, name, figures_dir)
            plt.close(figure)
    from kitlib import figures_placement

    if figures_placement.has_placement_runs(df):
        figure = figures_placement.placement_figure(df)
        written["placement-seed003-iops-rtt"] = plots.save(figure, "placement-seed003-iops-rtt", figures_dir)
        plt.close(figure)
    return written


def littles_law_table(df: pd.DataFrame, tolerance: float = littles_law.TOLERANCE) -> pd.DataFrame:
    return littles_law.check(df, tolerance)


def claims_table(df: pd.DataFrame) -> pd.DataFrame:
    return claims.evaluate_all(df)


def write_summary(
    verdicts: pd.DataFrame, figures: dict[str, list[Path]], path: str | Path, sources: Sequence[str | Path] = ()
) -> Path:
    """A one-page Markdown summary: each claim's verdict with its reason, and links to the figures."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    counts = verdicts["status"].value_counts()
    lines = ["# Which claims reproduced on this host", ""]
    if sources:
        lines += ["Records from: " + ", ".join(f"`{s}`" for s in as_list(list(sources))), ""]
    lines += [
        ", ".join(
            f"**{counts.get(s, 0)}** {s}" for s in (claims.REPRODUCED, claims.NOT_REPRODUCED, claims.NOT_TESTABLE)
        ),
        "",
        "| claim | verdict | evidence | source |",
        "|---|---|---|---|",
    ]
    for _, row in verdicts.iterrows():
        reason = str(row["reason"]).replace("|", "/")
        lines.append(f"| {row['statement']} | **{row['status']}** | {reason} | {row['source']} |")
    lines += ["", "## Figures", ""]
    for name, files in sorted(figures.items()):
        png = next((f for f in files if f.suffix == ".png"), files[0])
        lines.append(f"- [{name}]({_relative(png, path.parent)})")
    if not figures:
        lines.append("(no figures: no records)")
    path.write_text("\n".join(lines) + "\n")
    return path


def _relative(target: Path, start: Path) -> str:
    import os

    return os.path.relpath(Path(target).resolve(), Path(start).resolve())
