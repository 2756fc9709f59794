"""The experiments the kit measures, by name: each module adds its workloads to the specification of
the same name in `kitlib.specs` and defines `EXPERIMENT`. A name from outside (a command line, a
notebook parameter, `make reproduce`'s list) is looked up with `get`; code that holds a plan asks
`of(plan)`, so the name is never spelled again."""

from __future__ import annotations

import importlib

from kitlib import specs
from kitlib.measure.experiments.base import Experiment, Workload
from kitlib.measure.planning import Plan


def get(name: str) -> Experiment:
    """The experiment called `name`; an unknown name is refused, naming the known ones."""
    return importlib.import_module(f"kitlib.measure.experiments.{specs.module_name(name)}").EXPERIMENT


def of(plan: Plan) -> Experiment:
    """The experiment that made `plan`."""
    return get(plan.experiment)


def workloads_of(plan: Plan) -> list[Workload]:
    """The plan's workloads, built from its typed parameters."""
    return of(plan).workloads(plan)
