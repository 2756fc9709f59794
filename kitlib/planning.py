"""The validated plan of one experiment run: checked before any container, VM or namespace exists.

A bad value gets one message naming the parameter and what is allowed. The plan's digest names
its results folder, so running the same plan again resumes it instead of starting over; the digest
covers everything that changes what is measured (parameters, environments, order and its seed, the
peer path, the system under test's host, the benchmark image), so a different plan never resumes
another's results.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from kitlib.environments.labels import parse_label
from kitlib.errors import PlanError
from kitlib.interference import Rule

#: the environment kinds a remote system under test runs (over SSH, with its own Docker engine)
REMOTE_KINDS = ("native", "docker")
PROFILES = ("quick", "standard", "paper")
ORDERS = ("interleaved", "blocked")
#: plan fields that do not change what is measured (credentials' files, the preset's name: its
#: values are in `params`); everything else is part of the digest and must match to resume
NOT_IDENTITY = ("ssh_key", "known_hosts", "preset", "sut_docker_socket")


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
    #: the remote engine's socket on the system under test (default: its SSH session's DOCKER_HOST)
    sut_docker_socket: str | None = None
    ssh_key: str | None = None
    known_hosts: str | None = None
    #: the named parameter set the params came from, if any (recorded; the params themselves decide)
    preset: str | None = None
    #: `interleaved` (default): each repetition runs every environment once, in an order shuffled
    #: from `seed` (randomized multiple interleaved trials); `blocked`: one environment after another
    order: Literal["interleaved", "blocked"] = "interleaved"
    #: seed of the interleaved order; None draws one when the plan is made (then recorded)
    seed: int | None = None
    #: the benchmark image (its build inputs' digest) where an environment uses one
    image: str | None = None
    #: when a point counts as disturbed and how often it is measured at most (`kitlib.interference.Rule`);
    #: plans made by the kit record the defaults, a plan.json from before the rule existed reads as None
    #: (the defaults apply; left out of the digest, so such a run still resumes)
    interference: Rule | None = None

    @model_validator(mode="before")
    @classmethod
    def _draw_seed(cls, data: Any) -> Any:
        """A plan made without a seed gets one derived from its other fields: stable, so the same plan
        made twice has the same run_id (and resumes), and recorded in plan.json."""
        if isinstance(data, dict) and data.get("seed") is None:
            payload = {k: v for k, v in data.items() if k not in NOT_IDENTITY and k not in ("seed", "interference")}
            text = json.dumps(payload, sort_keys=True, default=str)
            data = {**data, "seed": int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)}
        return data

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
    def _remote_sut_kinds(self) -> Plan:
        if self.sut_host:
            others = [label for label in self.environments if parse_label(label).kind not in REMOTE_KINDS]
            if others:
                raise ValueError(
                    f"a remote system under test (sut_host) runs `native` and `docker-*` only, not {others}"
                )
        if self.peer == "remote" and (not self.peer_host or not self.sut_address):
            raise ValueError("a remote peer needs peer_host and sut_address (the system under test as it sees it)")
        return self

    @field_validator("repetitions")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        return value

    @property
    def peer_path(self) -> str:
        """How the client reaches the system under test: `netns`, `loopback` or `remote:<host>`
        (`auto` resolved as the runner will: a namespace where root allows)."""
        if self.peer == "remote":
            return f"remote:{self.peer_host}"
        if self.sut_host:
            return f"remote:{self.sut_address or self.sut_host}"
        if self.peer == "auto":
            return "netns" if os.geteuid() == 0 else "loopback"
        return self.peer

    def identity(self) -> dict[str, Any]:
        """Everything that changes what is measured: the digest's input, and what must match to resume."""
        payload = self.model_dump(mode="json", exclude=set(NOT_IDENTITY))
        payload["peer"] = self.peer_path
        if payload.get("interference") is None:
            payload.pop("interference", None)
        return payload

    @property
    def digest(self) -> str:
        """Hash of everything that changes what is measured, where and how it is scheduled."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True, default=str).encode()).hexdigest()[:10]

    def environment_order(self) -> list[list[str]]:
        """The environments of each repetition in the order they run: shuffled per repetition from
        the seed (interleaved), or the listed order every time (blocked: the runner then runs all
        repetitions of one environment before the next)."""
        rng = random.Random(self.seed)
        rounds = []
        for _ in range(self.repetitions):
            envs = list(self.environments)
            if self.order == "interleaved":
                rng.shuffle(envs)
            rounds.append(envs)
        return rounds

    @property
    def run_id(self) -> str:
        return f"{self.profile}-{self.digest}"


def load_plan(path: str | Path, experiment: str | None = None) -> Plan:
    """A validated plan from a `plan.json` (the store's document, or a bare plan): what `kit run` hands
    its notebook, so the plan is built once and the notebook runs exactly what was validated."""
    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PlanError(f"plan_file: cannot read a plan from {path}: {exc}") from None
    try:
        plan = Plan.model_validate(document.get("plan", document))
    except ValidationError as error:
        raise explain(error, str(path)) from None
    if experiment is not None and plan.experiment != experiment:
        raise PlanError(f"plan_file: {path} is a plan of {plan.experiment!r}, not of {experiment!r}")
    return plan


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
