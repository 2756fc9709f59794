"""Tidy measurement records: one measurement a row, dimensions as columns.

A missing value stays missing (NaN in a frame, never 0): a parser that cannot find a number
raises, and a record is never built from a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kitlib.core.errors import RecordError

#: Columns every record file has, in this order; parameter columns follow.
CORE_COLUMNS = (
    "experiment",
    "workload",
    "env",
    "metric",
    "value",
    "unit",
    "run_id",
    "repetition",
)
#: Run bookkeeping: columns that never make two records different configurations (the host does:
#: records of two machines are never pooled).
BOOKKEEPING_COLUMNS = frozenset(
    {"value", "run_id", "repetition", "source", "order", "position", "started", "measured_requests", "seconds"}
    | {"duration_s"}
    # the point's measurement quality (kitlib.core.interference): how it went, not what was measured
    | {"steal_pct", "foreign_cpu_pct", "runqueue_mean", "cpu_mhz", "capacity_pct", "attempt", "discarded_attempts"}
    | {"disturbed"}
    # a time-bound point's steadiness (kitlib.core.steady)
    | {"steady", "steady_halfwidth_pct", "steady_bias_pct", "warmup_s", "point_seconds"}
    # the error rate of a sequential run's intervals (kitlib.core.sequential)
    | {"ci_alpha"}
    # a load generator's steady window (epoch seconds of its first and last second) and exit status
    | {"steady_start", "steady_end", "locust_exit", "locust_version"}
    # the versions of the experiment's tools (kitlib.core.tool_versions): checked where records are compared
    # and pooled, never a configuration of their own (an image's package revision is not the host's)
    | {"tool_versions"}
    # requests a time-bound Redis scale-out point derived from its warm-up's rate (like measured_requests)
    | {"requests_per_loader", "scaleout_requests_per_loader"}
    # a duet point's pairing (kitlib.measure.run.duet): which duet, on which CPUs, beside whom, how much together
    | {"duet", "duet_cpus", "duet_partner", "duet_overlap", "duet_partner_disturbed"}
)
#: Facts of the kit's own measuring programs (which program and source, the sizes it derived from the
#: plan and the host): they describe a run and split no series unless an experiment's schema declares one
#: (MySQL sweeps `threads`, which is only a fact of the memory and CPU programs).
PROGRAM_FACT_COLUMNS = frozenset(
    {"tool", "program_source", "threads", "elements", "array_bytes", "array_over_llc", "ntimes", "table_bytes"}
    | {"updates_per_word", "linpack_n", "trials"}
)
#: The columns a parser fills (the rest come from the run that called it).
MEASUREMENT_COLUMNS = ("metric", "value", "unit")


def check_value(metric: str, value: Any) -> None:
    """A measured value is a finite number: NaN, infinity, text or None is the kit's error naming the
    metric (a RecordError, also a ValueError or TypeError to callers that catch those)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise RecordError(f"{metric}: value must be a number, got {value!r}")
    if math.isnan(value):
        raise RecordError(f"{metric}: a measurement cannot be NaN")
    if math.isinf(value):
        raise RecordError(f"{metric}: a measurement cannot be infinite ({value!r})")


@dataclass(frozen=True)
class Measurement:
    """What a parser returns: a metric, its value and unit, and dimensions the tool output names."""

    metric: str
    value: float
    unit: str
    dims: Mapping[str, Any] = field(default_factory=dict)
    #: set when one tool run measures several workloads (hpcc: HPL, STREAM, RandomAccess)
    workload: str | None = None

    def __post_init__(self) -> None:
        check_value(self.metric, self.value)


@dataclass(frozen=True)
class Record:
    """One row of the results: a measurement placed in its run, environment and parameters."""

    experiment: str
    workload: str
    env: str
    metric: str
    value: float
    unit: str
    run_id: str
    repetition: int
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_value(self.metric, self.value)

    def as_row(self) -> dict[str, Any]:
        row = {name: getattr(self, name) for name in CORE_COLUMNS}
        clash = set(self.params) & set(CORE_COLUMNS)
        if clash:
            raise ValueError(f"parameter names clash with record columns: {sorted(clash)}")
        row.update(self.params)
        return row


def place(
    measurements: Iterable[Measurement],
    *,
    experiment: str,
    workload: str,
    env: str,
    run_id: str,
    repetition: int,
    params: Mapping[str, Any],
) -> list[Record]:
    """Turn a parser's measurements into records of one run unit."""
    return [
        Record(
            experiment=experiment,
            workload=m.workload or workload,
            env=env,
            metric=m.metric,
            value=float(m.value),
            unit=m.unit,
            run_id=run_id,
            repetition=repetition,
            params={**params, **m.dims},
        )
        for m in measurements
    ]


def to_frame(records: Iterable[Record]):
    """Records as a pandas DataFrame with the core columns first."""
    import pandas as pd

    rows = [r.as_row() for r in records]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=list(CORE_COLUMNS))
    extra = [c for c in frame.columns if c not in CORE_COLUMNS]
    return frame[list(CORE_COLUMNS) + extra]


def flag_is(flags, value: bool):
    """Where a flag column (`steady`, `disturbed`) holds `value`, as written or as a CSV with missing
    values reads it back (text); a missing flag is neither."""
    return flags.map(lambda v: v is value or str(v) == str(value))


def one_per_point(records):
    """One row per point: its records share run, workload, environment, repetition, position and start."""
    point = [c for c in ("run_id", "workload", "env", "repetition", "position", "started") if c in records.columns]
    return records.drop_duplicates(point)
