"""What each experiment is, apart from how it is measured: its parameters, profiles, presets, default
environments and what its records mean (`kitlib.core.schema`), plus the vocabulary of environment labels.

Pure: nothing here starts a process, reads a results folder or imports the measuring code, so the
analysis (figures, claims, tables) and a notebook that only reads records stand on this alone. The
measuring side (`kitlib.measure.experiments`) adds the workloads to these specifications.
"""

from __future__ import annotations

import importlib

from kitlib.core.errors import PlanError
from kitlib.core.schema import Schema
from kitlib.specs.base import Spec

#: experiment name -> module name, the same in `kitlib.specs` and `kitlib.measure.experiments`
MODULES = {
    name: name.replace("-", "_")
    for name in (
        *("redis", "latency", "cpu", "memory", "net", "block", "mysql", "startup", "scaleout", "scaleout-oltp"),
        "webtier",
    )
}


def names() -> list[str]:
    """The experiments the kit knows, in the order the README and `make reproduce` list them."""
    return list(MODULES)


def module_name(name: str) -> str:
    """The module of experiment `name` (in this package and in `kitlib.measure.experiments`); an unknown name is
    refused, naming the known ones."""
    if name not in MODULES:
        raise PlanError(f"unknown experiment {name!r}; known experiments: {', '.join(MODULES)}")
    return MODULES[name]


def get(name: str) -> Spec:
    return importlib.import_module(f"kitlib.specs.{module_name(name)}").SPEC


def schema(name: str) -> Schema:
    """What an experiment's records mean; an empty schema for a name the kit does not know (old records)."""
    return get(name).schema if name in MODULES else Schema()
