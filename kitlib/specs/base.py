"""An experiment's specification (`Spec`) and the checks its parameter models share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kitlib.core.schema import Schema


def sorted_within(values: list[int], low: float, high: float, what: str) -> list[int]:
    """A swept list: not empty, every value in [low, high], returned sorted without repeats."""
    bad = [v for v in values if v < low or v > high]
    if not values or bad:
        raise ValueError(f"{what} must be between {low:g} and {high:g}, got {bad or values}")
    return sorted(set(values))


def known_names(values: list[str], known: Sequence[str]) -> list[str]:
    """A parameter naming some of an experiment's workloads or parts: at least one, each known, so that a
    misspelling is refused instead of silently planning no points."""
    unknown = [v for v in values if v not in known]
    if unknown or not values:
        given = f"unknown {', '.join(map(repr, unknown))}" if unknown else "none given"
        raise ValueError(f"{given}; choose from {', '.join(known)}")
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class Spec:
    """An experiment as a reader of its records needs it: its notebook, parameter model, profiles and
    presets, the environments it runs when none are named, and what its records mean."""

    name: str
    notebook: str
    params_model: type[BaseModel]
    profiles: dict[str, dict[str, Any]]
    #: the environments run when none are named; a function of the parameters where they decide it
    default_envs: Sequence[str] | Callable[[Any], Sequence[str]]
    repetitions: dict[str, int] = field(default_factory=lambda: {"quick": 3, "standard": 5, "paper": 10})
    #: named parameter sets of other studies (e.g. seed 003's fio setup), applied over the profile
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what the records mean: sweep axes, series, closed loops, figures, claims (`kitlib.core.schema`)
    schema: Schema = field(default_factory=Schema)

    def envs_for(self, params: BaseModel | None = None) -> list[str]:
        """Default environments (for the quick profile's parameters when none are given)."""
        if callable(self.default_envs):
            return list(self.default_envs(params or self.params_model(**self.profiles["quick"])))
        return list(self.default_envs)
