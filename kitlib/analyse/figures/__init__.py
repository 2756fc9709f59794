"""Figures, one module per experiment (one host's records in, matplotlib Figure out), on one style
(`style`: colours per environment, error bars named on every figure, emulation dashed); `save`
writes PNG and PDF. Which figures an experiment makes, and from which workloads' records, is
declared by its schema (`kitlib.core.schema.FigureSpec`): `draw` and `render` read it from there and draw
each host's records apart (`hosts`), one file per figure and host, named by the runs drawn:
`<figure>-<host>-<run>` (a committed sample's figures never share a name with a new run's)."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures import (
    hosts,
    latency,
    memory,
    mysql,
    net_block,
    placement,
    redis,
    scaleout,
    scaleout_oltp,
    startup,
    style,
)
from kitlib.analyse.figures.style import save

__all__ = [
    "draw",
    "file_name",
    "hosts",
    "latency",
    "memory",
    "mysql",
    "net_block",
    "placement",
    "redis",
    "render",
    "save",
    "scaleout",
    "scaleout_oltp",
    "startup",
    "style",
]


def file_name(figure: str, host: str, records: pd.DataFrame | None = None) -> str:
    """A figure's file name for one host's records and the runs they come from:
    `redis-fig8-9-throughput-latency-4a995c87670d-quick-d9efc6329a` (`runs_tag`)."""
    tag = runs_tag(records)
    return f"{figure}-{host}-{tag}" if tag else f"{figure}-{host}"


def runs_tag(records: pd.DataFrame | None) -> str:
    """The runs records come from, short: the run id of one run, `3-runs-<8 hex of their ids>` of
    several; empty where the records name no run."""
    if records is None or "run_id" not in records.columns:
        return ""
    runs = sorted({str(r) for r in records["run_id"].dropna()})
    if len(runs) <= 1:
        return runs[0] if runs else ""
    return f"{len(runs)}-runs-" + hashlib.sha256("\n".join(runs).encode()).hexdigest()[:8]


def draw(records: pd.DataFrame, experiment: str, workload: str | None = None) -> dict[str, object]:
    """{file name: Figure} of every figure the experiment declares that these records allow (only those
    drawn from `workload`'s records when given), one per host: two machines are never in one picture."""
    part = records[records["experiment"] == experiment] if "experiment" in records.columns else records
    drawn: dict[str, object] = {}
    for host, own in hosts.by_host(part):
        own = own.dropna(axis=1, how="all")  # columns of other experiments or hosts say nothing here
        for spec in specs.schema(experiment).figures:
            if (workload is None or workload in spec.workloads) and spec.drawable(own):
                module, function = spec.draw.rsplit(".", 1)
                figure = getattr(importlib.import_module(f"kitlib.analyse.figures.{module}"), function)
                made = figure(own)
                if made is not None:  # the records hold nothing this figure draws (e.g. no scale-out)
                    drawn[file_name(spec.name, host, own)] = made
    return drawn


def render(
    records: pd.DataFrame,
    experiment: str,
    directory: str | Path | None = None,
    workload: str | None = None,
    close: bool = False,
) -> dict[str, list[Path]]:
    """Draw and save (PNG + PDF) what `draw` finds; {name: files}. A notebook keeps the figures open so
    they show under the cell; a batch run closes them."""
    written: dict[str, list[Path]] = {}
    for name, figure in draw(records, experiment, workload).items():
        written[name] = save(figure, name, directory)
        if close:
            import matplotlib.pyplot as plt

            plt.close(figure)
    return written
