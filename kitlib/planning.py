"""The validated plan of one experiment run: checked before any container, VM or namespace exists.

A bad value gets one message naming the parameter and what is allowed. The plan's digest names
its results folder, so running the same plan again resumes it instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from kitlib.environments.labels import parse_label
from kitlib.errors import PlanError

PROFILES = ("quick", "standard", "paper")


class Plan(BaseModel):
    """What to run: experiment, environments, profile, repetitions and the experiment's parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    experiment: str
    environments: tuple[str, ...]
    profile: Literal["quick", "standard", "paper"]
    repetitions: int
    params: dict[str, Any]
    peer: Literal["auto", "netns", "loopback", "remote"] = "auto"
    peer_host: str | None = None
    sut_address: str | None = None
    sut_host: str | None = None
    ssh_key: str | None = None
    known_hosts: str | None = None
    #: the named parameter set the params came from, if any (recorded; the params themselves decide)
    preset: str | None = None

    @field_validator("environments")
    @classmethod
    def _known_labels(cls, labels: tuple[str, ...]) -> tuple[str, ...]:
        if not labels:
            raise ValueError("at least one environment is needed")
        for label in labels:
            parse_label(label)
        if len(set(labels)) != len(labels):
            raise ValueError(f"an environment is listed twice: {list(labels)}")
        return labels

    @model_validator(mode="after")
    def _remote_sut_is_native(self) -> Plan:
        if self.sut_host:
            others = [label for label in self.environments if parse_label(label).kind != "native"]
            if others:
                raise ValueError(f"a remote system under test (sut_host) runs `native` only, not {others}")
        return self

    @field_validator("repetitions")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @property
    def digest(self) -> str:
        """Hash of everything that changes what is measured (not where the peer is)."""
        payload = {
            "experiment": self.experiment,
            "environments": list(self.environments),
            "profile": self.profile,
            "repetitions": self.repetitions,
            "params": self.params,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:10]

    @property
    def run_id(self) -> str:
        return f"{self.profile}-{self.digest}"


def parse_value(text: Any) -> Any:
    """A parameter given as text (`kit run -p`, `papermill -p`): JSON or a Python literal where it
    parses as one (`[1, 8, 32]`, `10`), else the text itself. Non-text values pass through."""
    import ast

    if not isinstance(text, str):
        return text
    for loader in (json.loads, ast.literal_eval):
        try:
            return loader(text)
        except (ValueError, SyntaxError):
            continue
    return text


def explain(error: ValidationError, context: str) -> PlanError:
    """One readable message out of pydantic's errors: parameter, what was given, what is allowed."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"] if part != "__root__") or "plan"
        given = item.get("input")
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"  {where}: {message} (given: {given!r})")
    return PlanError(f"invalid parameters for {context}:\n" + "\n".join(lines))
