"""The experiments the kit measures, by name: each module adds its workloads to the specification of
the same name in `kitlib.specs` and defines `EXPERIMENT`."""

from __future__ import annotations

import importlib

from kitlib import specs
from kitlib.measure.experiments.base import Experiment


def get(name: str) -> Experiment:
    return importlib.import_module(f"kitlib.measure.experiments.{specs.module_name(name)}").EXPERIMENT
