"""The validated plan as a reader wants to see it before anything runs: every parameter's actual value
(the profile's, a preset's or yours), with what it means, so nobody has to read the experiment's module."""

from __future__ import annotations

import pandas as pd

from kitlib.measure.planning import Plan

#: meanings (with units) of parameters whose model gives no description
MEANINGS = {
    "pipeline": "requests each connection keeps in flight (the paper: 10)",
    "keyspace": "distinct keys the benchmark draws from",
    "value_size": "bytes per value (the paper: ~50)",
    "server_cores": "CPU cores the server is pinned to",
    "parts": "which parts of the latency study run",
    "shares": "--cpu-shares of the container (relative weight; 1024 = default)",
    "period": "--cpu-period (µs)",
    "tree_file_kb": "size of each file in the listed tree (KB)",
    "level": "xz compression level (the paper: 2)",
    "linpack_memory_fraction": "share of memory Linpack's two matrices may use (0-1)",
    "workloads": "which of the experiment's workloads run",
    "warmup_seconds": "unmeasured run before each point (s)",
    "tables": "sysbench tables",
}


def plan_table(plan: Plan) -> pd.DataFrame:
    """One row per parameter: its value in this plan and its description from the parameter model."""
    fields = type(plan.params).model_fields
    rows = [
        {
            "parameter": name,
            "value": value,
            "meaning": (fields[name].description if name in fields else None) or MEANINGS.get(name, ""),
        }
        for name, value in plan.params.model_dump(mode="json").items()
    ]
    return pd.DataFrame(rows, columns=["parameter", "value", "meaning"])


def show_plan(plan: Plan) -> pd.DataFrame:
    """Print the run's identity and return the parameter table (a notebook displays it)."""
    preset = f", preset {plan.preset}" if getattr(plan, "preset", None) else ""
    surveyed = getattr(plan, "survey", ())
    survey = f" (at the sweep's middle point only: {', '.join(surveyed)})" if surveyed else ""
    print(
        f"{plan.experiment}: run {plan.run_id} ({plan.profile} profile{preset}), {plan.repetitions} repetition(s), "
        f"environments: {', '.join(plan.environments)}{survey}; peer: {plan.peer}"
    )
    return plan_table(plan)
