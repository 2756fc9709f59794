"""Figures, one module per experiment (records DataFrame in, matplotlib Figure out), on one style
(`style`: colours per environment, error bars = standard deviation, emulation dashed); `save`
writes PNG and PDF. Which figures an experiment makes, and from which workloads' records, is
declared by its schema (`kitlib.schema.FigureSpec`): `draw` and `render` read it from there."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd

from kitlib import experiments
from kitlib.figures import (
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
from kitlib.figures.style import save

__all__ = [
    "draw",
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


def draw(records: pd.DataFrame, experiment: str, workload: str | None = None) -> dict[str, object]:
    """{figure name: Figure} of every figure the experiment declares that these records allow
    (only those drawn from `workload`'s records when given)."""
    part = records[records["experiment"] == experiment] if "experiment" in records.columns else records
    part = part.dropna(axis=1, how="all")  # columns of other experiments say nothing here
    drawn: dict[str, object] = {}
    for spec in experiments.schema(experiment).figures:
        if (workload is None or workload in spec.workloads) and spec.drawable(part):
            module, function = spec.draw.rsplit(".", 1)
            drawn[spec.name] = getattr(importlib.import_module(f"kitlib.figures.{module}"), function)(part)
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
