"""The validated plan of one experiment run: checked before any container, VM or namespace exists.

A bad value gets one message naming the parameter and what is allowed. The plan's digest names
its results folder, so running the same plan again resumes it instead of starting over; the digest
covers everything that changes what is measured (parameters, environments, order and its seed, the
peer path, the system under test's host, the benchmark image, and the machine the plan is made on:
its machine-id with its hardware, `kitlib.core.hostid`), so a different plan, or the same plan on another
machine (a clone of one image included), never resumes another's results.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import socket
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializeAsAny, ValidationError, field_validator, model_validator

from kitlib import specs
from kitlib.core import hostnames
from kitlib.core.errors import PlanError
from kitlib.core.interference import Rule
from kitlib.core.sequential import Stopping
from kitlib.core.steady import Rule as SteadyRule
from kitlib.measure.host.ssh_files import check_private_key
from kitlib.measure.provenance import this_host_id
from kitlib.specs import option_values
from kitlib.specs.labels import is_emulated, parse_label

#: the environment kinds a remote system under test runs (over SSH, with its own Docker engine)
REMOTE_KINDS = ("native", "docker")
PROFILES = ("quick", "standard", "paper")
ORDERS = ("interleaved", "blocked", "duet")


def duet_baseline(labels: Any) -> str:
    """The baseline of a duet run: `native` where it is measured (every claim's reference), else the first."""
    labels = list(labels)
    return "native" if "native" in labels else labels[0]


#: plan fields that do not change what is measured (credentials' files, the preset's name: its
#: values are in `params`); everything else is part of the digest and must match to resume
NOT_IDENTITY = ("ssh_key", "known_hosts", "preset", "sut_docker_socket")
#: repetitions of one point: the interval narrows as 1/sqrt(n), so past a thousand the machine's drift
#: over the run, not the count, bounds the precision, while the run's length grows without end
MAX_REPETITIONS = 1000
#: points of one run (the largest paper profile plans under a thousand): at seconds to minutes a point,
#: more is weeks of measuring in one folder, better split into runs
MAX_POINTS = 100_000


class Plan(BaseModel):
    """What to run: experiment, environments, profile, repetitions and the experiment's parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    experiment: str
    environments: tuple[str, ...]
    profile: Literal["quick", "standard", "paper"]
    repetitions: int
    #: the experiment's own parameter model (`kitlib.specs`), validated once, when the plan is made or read;
    #: a dict only in plan.json
    params: SerializeAsAny[BaseModel]
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
    #: from `seed` (randomized multiple interleaved trials); `blocked`: one environment after another;
    #: `duet`: each environment's points at the same moment as the baseline's, on the other half of the
    #: CPUs, the halves swapped every repetition (`kitlib.measure.run.duet`)
    order: Literal["interleaved", "blocked", "duet"] = "interleaved"
    #: seed of the interleaved order; None draws one when the plan is made (then recorded)
    seed: int | None = None
    #: the benchmark image (its build inputs' digest) where an environment uses one
    image: str | None = None
    #: the id of the machine the plan is made on and runs on (`kitlib.core.hostid`; filled where it is made)
    host: str | None = None
    #: when a point counts as disturbed and how often it is measured at most (`kitlib.core.interference.Rule`);
    #: plans made by the kit record the defaults, a plan.json from before the rule existed reads as None
    #: (the defaults apply; left out of the digest, so such a run still resumes)
    interference: Rule | None = None
    #: when a time-bound point is steady enough to count (`kitlib.core.steady.Rule`); None in a plan.json from
    #: before the rule existed (the defaults apply; left out of the digest, so such a run still resumes)
    steady: SteadyRule | None = None
    #: repetitions added after `repetitions` until the claims are decided (`kitlib.core.sequential`); None:
    #: the fixed design, its intervals at 95%. Part of the digest: a sequential run's intervals are wider
    until_decided: Stopping | None = None
    #: environments measured at one point of each workload's sweep, its middle one (`points_of`), and none
    #: a search would add: labels a run shows beside the others but no claim compares (`make reproduce`'s
    #: isolation mechanisms; every label of an experiment no claim of which the kit can test), for a
    #: fraction of the sweep's time. Part of the digest where given
    survey: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _typed_params(cls, data: Any) -> Any:
        """Parameters given as a dict (a plan.json, a notebook's plan file) become the experiment's own
        model here, once: an unknown experiment is a PlanError naming the known ones, a parameter the
        model refuses a validation error placed under `params` (`explain` words it)."""
        if isinstance(data, dict) and isinstance(data.get("params"), dict):
            model = specs.get(str(data.get("experiment"))).params_model
            try:
                data = {**data, "params": model.model_validate(data["params"])}
            except ValidationError as error:  # the same errors, placed under `params`
                details = [{k: e[k] for k in ("type", "loc", "input", "ctx") if k in e} for e in error.errors()]
                raise ValidationError.from_exception_data(
                    cls.__name__, [{**d, "loc": ("params", *d["loc"])} for d in details]
                ) from None
        return data

    @model_validator(mode="before")
    @classmethod
    def _draw_seed(cls, data: Any) -> Any:
        """A plan made without a seed gets one derived from its other fields: stable, so the same plan
        made twice has the same run_id (and resumes), and recorded in plan.json. The machine does not
        change the seed (the same plan runs in the same order everywhere); a plan made without a host
        is this machine's."""
        if isinstance(data, dict) and data.get("host") is None:
            data = {**data, "host": this_host_id()}
        if isinstance(data, dict) and data.get("seed") is None:
            payload = {
                k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v
                for k, v in data.items()
                if k not in NOT_IDENTITY
                and k not in ("seed", "host", "interference", "steady")
                and not (k == "survey" and not v)  # none surveyed: the seed of a plan from before the field
            }
            text = json.dumps(payload, sort_keys=True, default=str)
            data = {**data, "seed": int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)}
        return data

    @model_validator(mode="before")
    @classmethod
    def _duet_control(cls, data: Any) -> Any:
        """A duet run measures its A/A control beside it: the baseline against its own `+replica`, in
        duets of their own, so the floor of the design on this host is read from the same run."""
        if isinstance(data, dict) and data.get("order") == "duet":
            labels = list(data.get("environments") or ())
            if labels:
                control = f"{duet_baseline(labels)}+replica"
                if control not in labels:
                    data = {**data, "environments": (*labels, control)}
        return data

    @field_validator("peer_host", "sut_host", mode="before")
    @classmethod
    def _ssh_target(cls, value: Any) -> Any:
        return None if value is None else hostnames.ssh_target(value)

    @field_validator("sut_address", mode="before")
    @classmethod
    def _address(cls, value: Any) -> Any:
        return None if value is None else hostnames.address(value)

    @field_validator("sut_docker_socket", mode="before")
    @classmethod
    def _socket(cls, value: Any) -> Any:
        return None if value is None else hostnames.socket_path(value)

    @field_validator("ssh_key", "known_hosts", mode="before")
    @classmethod
    def _file(cls, value: Any) -> Any:
        return None if value is None else str(hostnames.file_path(value))

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
    def _surveyed_are_measured(self) -> Plan:
        strangers = [label for label in self.survey if label not in self.environments]
        if strangers:
            raise ValueError(f"survey names environments the plan does not measure: {strangers}")
        return self

    @model_validator(mode="after")
    def _duet_fits(self) -> Plan:
        """A duet needs two equal halves of this host's CPUs, workloads that declare how they run on half
        the machine (`WorkloadSchema.duet`), and a partner for the baseline."""
        if self.order != "duet":
            return self
        if self.sut_host:
            raise ValueError("order 'duet' runs both sides on this host's CPUs: not with a remote sut_host")
        if len(os.sched_getaffinity(0)) < 2:
            raise ValueError("order 'duet' needs at least 2 CPUs (one half a side); this process may use 1")
        schema = specs.schema(self.experiment)
        names = [n for n in getattr(self.params, "workloads", None) or schema.workloads if n in schema.workloads]
        lacking = [n for n in names if schema.workload(n).duet is None]
        if lacking:
            takes = [n for n, w in schema.workloads.items() if w.duet is not None]
            raise ValueError(
                f"order 'duet': {self.experiment} workload(s) {lacking} are not measured in duets "
                f"(those that are: {', '.join(takes) or 'none'}); use the interleaved order"
            )
        if not self.duet_partners():
            raise ValueError("order 'duet' needs an environment to measure beside the baseline")
        return self

    @model_validator(mode="after")
    def _params_of_the_experiment(self) -> Plan:
        model = specs.get(self.experiment).params_model
        if type(self.params) is not model:
            raise ValueError(f"{self.experiment!r} takes {model.__name__} parameters, not {type(self.params).__name__}")
        return self

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

    @model_validator(mode="after")
    def _options_fit_this_host(self) -> Plan:
        """Options are held to this host when it runs the system under test (a remote one's CPUs and
        memory are not this host's: Docker's own limits still apply to them, in the label)."""
        if self.sut_host:
            return self
        reasons = [
            f"{label!r}: {reason}"
            for label in self.environments
            for reason in option_values.beyond_host(parse_label(label).options)
        ]
        if reasons:
            raise ValueError("options beyond this host: " + "; ".join(reasons))
        return self

    @field_validator("ssh_key")
    @classmethod
    def _protected_key(cls, value: str | None) -> str | None:
        """A private key others can read is refused here, before anything starts, as OpenSSH refuses it
        (a key not there yet is refused when the connection is made)."""
        if value and Path(value).expanduser().exists():
            check_private_key(value)
        return value

    @field_validator("repetitions")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"must be at least 1, got {value}")
        if value > MAX_REPETITIONS:
            raise ValueError(
                f"at most {MAX_REPETITIONS}, got {value}: the interval narrows as 1/sqrt(n), so beyond that the "
                "machine's drift over the run bounds the precision while the run grows without end"
            )
        return value

    @property
    def peer_path(self) -> str:
        """How the client reaches the system under test, as records carry it in `peer` and the run's
        identity holds it: `netns`, `loopback` (`auto` resolved as `peer.make_peer` does: a namespace
        where root allows), or `remote:<the client's machine>`: the third machine (`peer_host`), or this
        one when only the system under test is remote. The records' `host` names the system under test,
        so `peer` names the other end: two client machines loading one server are two configurations."""
        if self.peer == "remote":
            return f"remote:{self.peer_host}"
        if self.sut_host:
            return f"remote:{socket.gethostname()}"
        if self.peer == "auto":
            return "netns" if os.geteuid() == 0 else "loopback"
        return self.peer

    def identity(self) -> dict[str, Any]:
        """Everything that changes what is measured: the digest's input, and what must match to resume."""
        payload = self.model_dump(mode="json", exclude=set(NOT_IDENTITY))
        payload["peer"] = self.peer_path
        for optional in ("interference", "steady", "until_decided"):  # absent from older plans, or not chosen
            if payload.get(optional) is None:
                payload.pop(optional, None)
        if not payload.get("survey"):
            payload.pop("survey", None)
        return payload

    def points_of(self, workload: Any, env: str) -> list[dict[str, Any]]:
        """The points `workload` measures in `env`: its whole sweep, or in a surveyed environment the
        sweep's middle point (of an even count, the upper of the two middle ones)."""
        points = workload.points()
        if env not in self.survey or not points:
            return points
        middle = len(points) // 2
        return points[middle : middle + 1]

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
    def baseline(self) -> str:
        """The environment every duet measures the others beside (`duet_baseline`)."""
        return duet_baseline(self.environments)

    def duet_partners(self) -> list[str]:
        """The environments measured in duets beside the baseline: all but surveyed ones and software
        emulation (an emulator runs many times slower, so most of a duet would run one side alone);
        those run on their own, interleaved, for figures only."""
        return [
            label
            for label in self.environments
            if label != self.baseline and label not in self.survey and not is_emulated(label)
        ]

    @property
    def ci_alpha(self) -> float | None:
        """The error rate of every interval on this run's records where it may grow (None: fixed design)."""
        return None if self.until_decided is None else self.until_decided.look_alpha(self.repetitions)

    @property
    def run_id(self) -> str:
        return f"{self.profile}-{self.digest}"


#: pydantic's errors of a value beyond a field's bounds: the field's description then says why
_BOUND_ERRORS = {"less_than", "less_than_equal", "greater_than", "greater_than_equal", "int_parsing_size"}


def explain(error: ValidationError, context: str, model: type[BaseModel] | None = None) -> PlanError:
    """One readable message out of pydantic's errors: parameter, what was given, what is allowed, and
    where a bound of `model`'s (the experiment's parameter model, for a plan's `params.…` too) was
    crossed, the field's description (it gives the bound's reason)."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"] if part != "__root__")
        given = repr(item.get("input"))
        given = given if len(given) <= 200 else given[:200] + "…"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "int_parsing_size":
            message = "Input is too large"
        loc = item["loc"][1:] if item["loc"][:1] == ("params",) and model is not None else item["loc"]
        field = model.model_fields.get(str(loc[0])) if model is not None and loc else None
        if item["type"] in _BOUND_ERRORS and field is not None and field.description:
            message += f" [{field.description}]"
        lines.append(f"  {where}: {message} (given: {given})" if where else f"  plan: {message}")
    return PlanError(f"invalid parameters for {context}:\n" + "\n".join(lines))
