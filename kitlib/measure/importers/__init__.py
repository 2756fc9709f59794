"""Importers: other people's published raw outputs turned into the kit's records, as a host of their own.

`kit import NAME PATH` reads the files where the user put them (a clone of the authors' repository) and
writes `results/<experiment>/<run_id>/` folders the claims and notebooks read like any run. The kit
never carries those files itself.
"""

from __future__ import annotations

import importlib

from kitlib.core.errors import PlanError

_MODULES = {"felter2014": "kitlib.measure.importers.felter2014"}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str):
    if name not in _MODULES:
        raise PlanError(f"unknown import source {name!r}; known: {', '.join(_MODULES)}")
    return importlib.import_module(_MODULES[name])
