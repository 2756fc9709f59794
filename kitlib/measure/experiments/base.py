"""The shape every experiment has: parameters and profiles → plan → workloads → points.

A workload builds command lines, runs them in an environment or on the peer, and hands the raw
outputs to its tool's parser. It never parses by itself and never invents a number.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from kitlib.core import steady as steady_rule
from kitlib.core.errors import PlanError
from kitlib.core.parameters import as_list, parse_value
from kitlib.core.records import Measurement
from kitlib.core.schema import Schema
from kitlib.measure import estimate, parsers
from kitlib.measure.environments.base import Environment
from kitlib.measure.image import DEFAULT_BASE, inputs_digest
from kitlib.measure.peer import Peer
from kitlib.measure.planning import MAX_POINTS, PROFILES, Plan, explain
from kitlib.specs.base import Spec
from kitlib.specs.labels import IMAGE_KINDS, parse_label


def _stopping(value: Any) -> Any:
    """A plan's sequential design as given: True means the defaults, False or None the fixed design."""
    if isinstance(value, bool):
        return {} if value else None
    return value


def image_inputs(environments: Sequence[str]) -> str | None:
    """The benchmark image as the plan knows it before anything is built: a digest of its Dockerfile
    and base image name (the built image's id is in provenance). None when no environment uses it."""
    import hashlib

    kinds = {parse_label(label).kind for label in environments if isinstance(label, str)}
    if not kinds & set(IMAGE_KINDS):
        return None

    digest = hashlib.sha256((DEFAULT_BASE + "\n" + inputs_digest()).encode()).hexdigest()[:12]
    return f"{DEFAULT_BASE}+Dockerfile:{digest}"


@dataclass
class RawResult:
    """Raw outputs of one measured point, by name (each saved as a file), plus kit-made measurements.
    `series` holds a tool's sub-interval logs (fio's IOPS log): saved beside the outputs, read by the
    workload's `intervals`, never by its tool's parser."""

    outputs: dict[str, str]
    extra: list[Measurement] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    series: dict[str, str] = field(default_factory=dict)


#: seconds a short program takes to start in an environment, check its result and report, besides its
#: work: what a size-bound point's model adds (0.3 to 1 s measured on a 2-core guest, `docker exec` included)
PROGRAM_START_S = 0.5

#: a point's figure per sub-interval of its run, and the sub-interval in seconds
Intervals = tuple[list[float], float]


class Workload(abc.ABC):
    """One benchmark of an experiment."""

    name: str
    tool: str
    #: CPUs for the system under test (the rest go to the client); None = all, no client.
    sut_cores: int | None = 1
    #: How many ports the server listens on (published by NAT environments).
    ports_needed: int = 0
    #: seconds its measuring command may run; a point estimated beyond it is refused when planned
    command_timeout: float = 3600.0
    #: the parameter setting a point's size, named when a point is refused as too long (size-bound tools)
    size_parameter: str | None = None
    #: the parameter setting a time-bound point's duration, where the workload reads its tool's
    #: sub-intervals (`intervals`): the runner then sizes its points for steady state (`kitlib.core.steady`)
    duration_parameter: str | None = None
    #: a point runs for a stated time whatever the CPU's speed (fio, sysbench, sockperf, nuttcp): software
    #: emulation lengthens size-bound points, not these (`kitlib.measure.estimate`)
    time_bound: bool = False
    #: the machine's capacity this workload's figure rests on, probed around each point (`kitlib.measure.capacity`:
    #: "memory", "cpu" or "wakeup"; None: not probed); `probe_kind` may choose per point
    capacity_probe: str | None = None
    #: what `next_points` searches for, in the words extensions.json gives as the reason for its points
    search: str = "search"

    def __init__(self, params: BaseModel):
        self.params = params

    def probe_kind(self, point: dict[str, Any]) -> str | None:
        """The capacity probe that follows this point's figure: the workload's, unless its points rest
        on different capacities (Redis: wake-ups with few requests in flight, CPU time with many)."""
        return self.capacity_probe

    @abc.abstractmethod
    def points(self) -> list[dict[str, Any]]:
        """The sweep: one dict of parameter columns per point."""

    def next_points(self, records: Any, environments: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Points to measure after the plan's, by environment, judged on the run's records so far (a search,
        such as the web tier's peak population); the runner measures them in every repetition and asks
        again until none is left. A search must end: never return a point already measured."""
        return {}

    def search_note(self) -> str | None:
        """What `next_points` may add, in words, for a dry run (None: no search)."""
        return None

    def likely_search_points(self) -> list[dict[str, Any]]:
        """The points `next_points` is expected to add in each environment on the search's likeliest path,
        for the time estimate (a budget that left them out would be overrun by them): [] without a search."""
        return []

    def prepare(self, env: Environment, peer: Peer) -> None:  # noqa: B027 - optional hook
        """Once per environment before its points (start a server, load data, warm up)."""

    @abc.abstractmethod
    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult: ...

    def finish(self, env: Environment, peer: Peer) -> None:  # noqa: B027 - optional hook
        """Once per environment after its points; services stop with the environment anyway."""

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        """Parse every raw output with the tool's parser; `source` names the saved files."""
        parse = parsers.get(self.tool)
        found: list[Measurement] = []
        for name, text in raw.outputs.items():
            found.extend(parse(text, f"{source}.{name}.txt"))
        return found + list(raw.extra)

    def intervals(self, raw: RawResult, source: str) -> Intervals | dict[str, Intervals] | None:
        """The point's headline figure per sub-interval of its run and the interval in seconds, read from
        the raw outputs (`source` names their files), where the tool reports them; None otherwise. A point
        made of parts that measure different things (Redis's SET and GET phases) gives them by name: each
        part must be steady on its own."""
        return None

    def profile_seconds(self) -> float | None:
        """The duration the plan gives a point of a time-bound workload (None: not sized)."""
        return None if self.duration_parameter is None else float(getattr(self.params, self.duration_parameter))

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """Seconds one point takes here (`rates`: this host's `kitlib.measure.estimate.Rates`); None = no model,
        the estimate then comes from this host's earlier points of the workload."""
        return None

    def applies_to(self, env_label: str) -> bool:
        """Whether this workload runs in that environment (an experiment may hold workloads for
        different environment sets, e.g. a CPU-quota sweep and a bridge comparison)."""
        return True

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        """Columns recorded with every measurement of a point."""
        return dict(point)


@dataclass(frozen=True)
class Experiment:
    """An experiment as the kit measures it: its specification (`kitlib.specs`) and the workloads that
    measure its points."""

    spec: Spec
    make_workloads: Callable[[Any], list[Workload]]
    #: fills parameters that depend on the plan's environments (e.g. one Linpack N for all of them),
    #: so they are recorded in the plan as parameters, the same for every environment of the run
    settle: Callable[[Any, Sequence[str]], Any] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def notebook(self) -> str:
        return self.spec.notebook

    @property
    def params_model(self) -> type[BaseModel]:
        return self.spec.params_model

    @property
    def profiles(self) -> dict[str, dict[str, Any]]:
        return self.spec.profiles

    @property
    def presets(self) -> dict[str, dict[str, Any]]:
        return self.spec.presets

    @property
    def repetitions(self) -> dict[str, int]:
        return self.spec.repetitions

    @property
    def schema(self) -> Schema:
        return self.spec.schema

    def plan(
        self,
        environments: Sequence[str] | None = None,
        profile: str = "quick",
        repetitions: int | None = None,
        peer: str = "auto",
        peer_host: str | None = None,
        sut_address: str | None = None,
        sut_host: str | None = None,
        ssh_key: str | None = None,
        known_hosts: str | None = None,
        preset: str | None = None,
        order: str = "interleaved",
        seed: int | None = None,
        hosts: str | None = None,
        sut_docker_socket: str | None = None,
        interference: dict[str, Any] | None = None,
        steady: dict[str, Any] | None = None,
        until_decided: dict[str, Any] | bool | None = None,
        survey: Sequence[str] | None = None,
        **overrides: Any,
    ) -> Plan:
        """Validate everything and return the plan; nothing is started here. A preset's values
        replace the profile's; parameters given explicitly replace both. `hosts`, an inventory file
        (`kitlib.measure.inventory`), fills the machines' fields (sut_host, sut_address, ssh_key, …) not given."""
        if hosts is not None:
            from kitlib.measure import inventory

            given_hosts = {
                "peer": None if peer == "auto" else peer,
                "peer_host": peer_host,
                "sut_address": sut_address,
                "sut_host": sut_host,
                "ssh_key": ssh_key,
                "known_hosts": known_hosts,
                "sut_docker_socket": sut_docker_socket,
            }
            filled = {**inventory.load(hosts).plan_fields()}
            filled.update({k: v for k, v in given_hosts.items() if v is not None})
            peer = filled.get("peer") or peer
            peer_host, sut_address, sut_host = filled.get("peer_host"), filled["sut_address"], filled["sut_host"]
            ssh_key, known_hosts, sut_docker_socket = (
                filled["ssh_key"],
                filled["known_hosts"],
                filled["sut_docker_socket"],
            )
        if profile not in PROFILES:
            raise PlanError(f"profile: unknown profile {profile!r}; known profiles: {', '.join(PROFILES)}")
        if preset is not None and preset not in self.presets:
            known = ", ".join(self.presets) or "none"
            raise PlanError(f"{self.name}: unknown preset {preset!r}; known presets: {known}")
        given = {k: parse_value(v, k) for k, v in overrides.items() if v is not None}
        given = {**(self.presets[preset] if preset else {}), **given}
        environments = as_list("environments", environments)  # `papermill -p` passes text, `-y` a list
        unknown = sorted(set(given) - set(self.params_model.model_fields))
        if unknown:
            known = ", ".join(self.params_model.model_fields)
            raise PlanError(f"{self.name}: unknown parameter(s) {unknown}; known parameters: {known}")
        try:
            params = self.params_model(**{**self.profiles[profile], **given})
        except ValidationError as error:
            raise explain(error, f"{self.name} ({profile} profile)", self.params_model) from None
        envs = tuple(environments) if environments else tuple(self.envs_for(params))
        if self.settle is not None:
            try:
                params = self.settle(params, envs)
            except ValidationError as error:
                raise explain(error, f"{self.name} ({profile} profile)", self.params_model) from None
        try:
            plan = Plan(
                experiment=self.name,
                environments=envs,
                profile=profile,
                repetitions=self.repetitions[profile] if repetitions is None else repetitions,
                params=params,
                peer=peer,
                peer_host=peer_host,
                sut_address=sut_address,
                sut_host=sut_host,
                sut_docker_socket=sut_docker_socket,
                ssh_key=ssh_key,
                known_hosts=known_hosts,
                preset=preset,
                order=order,
                seed=parse_value(seed, "seed"),
                image=image_inputs(envs),
                interference=parse_value(interference, "interference") or {},
                steady=steady_rule.rule_values(profile, parse_value(steady, "steady")),
                until_decided=_stopping(parse_value(until_decided, "until_decided")),
                survey=tuple(as_list("survey", survey)),
            )
        except ValidationError as error:
            raise explain(error, self.name) from None
        self.check(plan, self.name)
        estimate.refuse_overlong(self.name, self.make_workloads(params), envs)
        return plan

    def check(self, plan: Plan, context: str) -> None:
        """A plan of this experiment whose parameters are its own and valid, and whose run is no longer
        than MAX_POINTS points; a plan read from a file is held to this before anything is written."""
        if plan.experiment != self.name:
            raise PlanError(f"{context}: a plan of {plan.experiment!r}, not of {self.name!r}")
        workloads = self.workloads(plan)
        per_round = sum(
            len(plan.points_of(w, env)) for env in plan.environments for w in workloads if w.applies_to(env)
        )
        if per_round * plan.repetitions > MAX_POINTS:
            raise PlanError(
                f"{context}: {per_round * plan.repetitions} points ({per_round} per repetition × "
                f"{plan.repetitions} repetitions) is more than {MAX_POINTS}: at seconds to minutes a point that is "
                "weeks of measuring; split the study into runs of fewer environments, sweep values or repetitions"
            )

    def envs_for(self, params: BaseModel | None = None) -> list[str]:
        return self.spec.envs_for(params)

    def workloads(self, plan: Plan) -> list[Workload]:
        """The plan's workloads, from its parameters (already this experiment's model: `Plan` sees to it)."""
        return self.make_workloads(plan.params)
