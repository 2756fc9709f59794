"""The experiments the kit knows, by name; each module defines `EXPERIMENT`."""

from __future__ import annotations

import importlib

from kitlib.errors import PlanError
from kitlib.experiments.base import Experiment
from kitlib.schema import Schema

_MODULES = {
    "redis": "kitlib.experiments.redis",
    "latency": "kitlib.experiments.latency",
    "cpu": "kitlib.experiments.cpu",
    "memory": "kitlib.experiments.memory",
    "net": "kitlib.experiments.net",
    "block": "kitlib.experiments.block",
    "mysql": "kitlib.experiments.mysql",
    "startup": "kitlib.experiments.startup",
    "scaleout": "kitlib.experiments.scaleout",
    "scaleout-oltp": "kitlib.experiments.scaleout_oltp",
}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> Experiment:
    if name not in _MODULES:
        raise PlanError(f"unknown experiment {name!r}; known experiments: {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name]).EXPERIMENT


def schema(name: str) -> Schema:
    """What an experiment's records mean; an empty schema for a name the kit does not know (old records)."""
    return get(name).schema if name in _MODULES else Schema()
