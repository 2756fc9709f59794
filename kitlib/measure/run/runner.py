"""Execute a plan: peer, then the units in the plan's order, every missing one, into the store.

The order is the plan's: interleaved (default), each repetition runs every environment once in an
order shuffled from the plan's seed, the environment started for its units and stopped after them,
so a drift of the machine over the run spreads over all environments instead of looking like an
effect of one; or blocked, one environment's repetitions after another. Every record carries the
host that ran the system under test, the peer path, its unit's position in the order and start time.

Everything started is stopped by context managers, on success, on error and on Ctrl-C. A unit
that fails is recorded as failed with its reason and the run goes on; an environment that cannot
start marks all its units failed with the reason.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import itertools
import json
import random
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from kitlib import specs
from kitlib.core import interference, naming, paths, procs, sequential, signals, steady, tool_versions
from kitlib.core.errors import CommandFailed, EnvironmentUnavailable, KitError, Notice, ParseError
from kitlib.core.records import place
from kitlib.measure import capacity, cpus, environments, experiments, provenance
from kitlib.measure.experiments.base import Intervals, RawResult, Workload
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.ports import free_ports, is_free
from kitlib.measure.image import DEFAULT_BASE, ensure_image
from kitlib.measure.peer import make_peer
from kitlib.measure.planning import Plan
from kitlib.measure.run import duet, rejudge, remote_options
from kitlib.measure.run.progress import PointProgress
from kitlib.measure.store import RunStore, unit_key
from kitlib.specs.labels import IMAGE_KINDS, option_columns

#: search steps a run takes at most, whatever its workloads ask (each step measures every repetition)
MAX_SEARCH_STEPS = 20


@dataclass
class RunResult:
    plan: Plan
    root: Path
    records: Any  # pandas.DataFrame
    failures: Any  # pandas.DataFrame
    measured_units: int
    skipped_units: int
    #: what `kitlib.run` added until the claims were decided (`kitlib.adaptive.Report`), if it did
    added: Any = None


@dataclass(frozen=True)
class Unit:
    workload: Workload
    env: str
    point: dict[str, Any]
    repetition: int
    #: place in the run's order (0-based), the same however often the run is resumed
    position: int = 0
    #: its duet, in a duet run (`kitlib.measure.run.duet`); None: measured alone
    pairing: duet.Pairing | None = None

    @property
    def key(self) -> str:
        point = self.point if self.pairing is None else {**self.point, "with": self.pairing.partner}
        return unit_key(self.env, point, self.repetition, self.workload.name)


def plan_units(
    plan: Plan, workloads: list[Workload] | None = None, extensions: list[dict[str, Any]] | None = None
) -> list[Unit]:
    """Every unit of the plan in the order it runs (see the module docstring), then those added to it
    (`RunStore.extensions`: a sequential run's repetitions, a search's points), each in an order shuffled
    from the plan's seed and its repetition, positions continuing the plan's."""
    workloads = experiments.workloads_of(plan) if workloads is None else workloads

    def block(
        env: str, rep: int, names: set[str] | None = None, points: list[dict[str, Any]] | None = None
    ) -> list[tuple[Workload, str, dict[str, Any], int]]:
        chosen = [w for w in workloads if w.applies_to(env) and (names is None or w.name in names)]
        return [
            (w, env, point, rep) for w in chosen for point in (plan.points_of(w, env) if points is None else points)
        ]

    def duets(rep: int, envs: list[str], names: set[str] | None = None, points: list[dict[str, Any]] | None = None):
        """A duet run's repetition: each partner beside the baseline (both sides point by point), then the
        environments measured alone."""
        partners = [env for env in plan.duet_partners() if env in envs]
        found = []
        for partner in partners:
            pairing = {
                plan.baseline: duet.Pairing(duet.duet_id(rep, partner), duet.baseline_half(rep), partner),
                partner: duet.Pairing(duet.duet_id(rep, partner), 1 - duet.baseline_half(rep), plan.baseline),
            }
            for w, _, point, _ in block(plan.baseline, rep, names, points):
                if w.applies_to(partner):
                    found += [(w, env, point, rep, pairing[env]) for env in (plan.baseline, partner)]
        alone = [env for env in envs if env != plan.baseline and env not in partners]
        return found + [(*u, None) for env in alone for u in block(env, rep, names, points)]

    if plan.order == "blocked":
        ordered = [
            (w, env, point, rep, None)
            for env in plan.environments
            for w in workloads
            if w.applies_to(env)
            for point in plan.points_of(w, env)
            for rep in range(plan.repetitions)
        ]
    elif plan.order == "duet":
        ordered = [u for rep, envs in enumerate(plan.environment_order()) for u in duets(rep, envs)]
    else:
        ordered = [
            (*u, None) for rep, envs in enumerate(plan.environment_order()) for env in envs for u in block(env, rep)
        ]
    for added in extensions or []:
        rep, envs = int(added["repetition"]), list(added["environments"])
        random.Random(f"{plan.seed}:{rep}").shuffle(envs)
        names, points = set(added["workloads"]), added.get("points")
        if plan.order == "duet":
            ordered += duets(rep, [*envs, plan.baseline], names, points)
        else:
            ordered += [(*u, None) for env in envs for u in block(env, rep, names, points)]
    return [
        Unit(w, env, point, rep, position, pairing) for position, (w, env, point, rep, pairing) in enumerate(ordered)
    ]


def _point_identity(env: str, workload: str, point: dict[str, Any]) -> tuple[str, str, str]:
    """A point of a workload in an environment, whatever its repetition: what a search never adds twice."""
    return env, workload, unit_key(env, point, 0, workload)


def likely_search_units(plan: Plan, units: list[Unit]) -> list[Unit]:
    """The units the workloads' searches are expected to add to `units` (the plan's, with what was added
    so far), in every repetition of every environment they apply to: what a time estimate counts beside
    the plan's own (`Workload.likely_search_points`). Points already among `units` are not counted again."""
    known = {_point_identity(u.env, u.workload.name, u.point) for u in units}
    workloads = {u.workload.name: u.workload for u in units}.values()
    position = len(units)
    found: list[Unit] = []
    for rep in range(plan.repetitions):
        for env in plan.environments:
            for workload in workloads:
                if env in plan.survey or not workload.applies_to(env):
                    continue
                for point in workload.likely_search_points():
                    if _point_identity(env, workload.name, point) not in known:
                        found.append(Unit(workload, env, point, rep, position))
                        position += 1
    return found


def search_step(plan: Plan, store: RunStore, workloads: list[Workload]) -> int:
    """One step of the workloads' searches (`Workload.next_points`) on the run's records so far: each point
    asked for is added to every repetition of its environment (`extensions.json`, with why), interleaved
    as the plan's repetitions are. A point already in the run is never added again (one that failed in
    every repetition leaves no records to judge, and asking for it again would never end): the search
    ends there. Returns the points added (0: every search is done)."""
    records = store.consolidate()
    known = {_point_identity(u.env, u.workload.name, u.point) for u in plan_units(plan, workloads, store.extensions())}
    steps = []  # (environment, workload, its new points): each added in every repetition, repetitions outermost
    for workload in workloads:
        searched = [e for e in plan.environments if e not in plan.survey and workload.applies_to(e)]
        wanted = workload.next_points(records, searched) if searched else {}
        for env, points in wanted.items():
            new = [p for p in points if _point_identity(env, workload.name, p) not in known]
            if new:
                steps.append((env, workload, new))
    for rep in range(plan.repetitions):
        order = list(steps)  # environments shuffled per repetition, as the plan's are; the same on a resume
        random.Random(f"{plan.seed}:{rep}:search:{len(store.extensions())}").shuffle(order)
        for env, workload, new in order:
            why = [f"{workload.name}: {workload.search} ({'; '.join(_point_text(p) for p in new)})"]
            store.add_extension(rep, [env], [workload.name], why, points=new)
    return sum(len(new) for _, _, new in steps)


def _point_text(point: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in point.items())


def segments(units: list[Unit]) -> list[tuple[str, list[Unit]]]:
    """Consecutive units of one environment, or of one duet (both its environments): each is one start
    and stop of its environments."""
    grouped = itertools.groupby(units, key=lambda u: u.env if u.pairing is None else u.pairing.duet)
    return [(name, list(group)) for name, group in grouped]


def with_partners(todo: list[Unit], units: list[Unit]) -> list[Unit]:
    """The units to measure, each duet side's partner added where only one side is left: a duet's two
    sides are measured together or not at all (the ratio within it is the evidence)."""
    wanted = {u.key for u in todo}
    partners = {}
    for unit in units:
        if unit.pairing is not None:
            partners.setdefault((unit.pairing.duet, unit.workload.name, _point_text(unit.point)), []).append(unit)
    for pair in partners.values():
        if any(u.key in wanted for u in pair):
            wanted.update(u.key for u in pair)
    return [u for u in units if u.key in wanted]


def run_plan(
    plan: Plan,
    *,
    results_root: Path | None = None,
    progress: bool = True,
    image: str | None = None,
    base_image: str = DEFAULT_BASE,
) -> RunResult:
    """Run every unit of the plan that is not already done; return all records of the run."""
    experiment = experiments.of(plan)
    experiment.check(plan, plan.experiment)  # before anything is written: a bad plan leaves no folder
    remote_options.refuse_beyond_remote(plan)  # a remote system under test's options, held to its own facts
    store = RunStore(paths.run_folder(plan, results_root))
    store.write_plan(plan.model_dump(mode="json"))
    workloads = experiment.workloads(plan)
    units = plan_units(plan, workloads, store.extensions())
    idle = [env for env in plan.environments if not any(u.env == env for u in units)]
    if idle:
        warnings.warn(f"no workload of {plan.experiment} runs in {idle}; they are skipped", Notice, stacklevel=2)
    with _guarded(store):
        todo = with_partners(store.pending(units), units)
        if todo:
            _execute(plan, store, todo, progress=progress, image=image, base_image=base_image)
        for _ in range(MAX_SEARCH_STEPS):
            if not search_step(plan, store, workloads):
                break
            units = plan_units(plan, workloads, store.extensions())
            step = with_partners(store.pending(units), units)
            todo += step
            if step:
                what = ", ".join(sorted({u.workload.search for u in step}))
                _execute(plan, store, step, progress=progress, image=image, base_image=base_image, what=what)
        # the run's end judges what this call measured: a run resumed with nothing left to measure was
        # judged at its own end, and judging it again would only move its points by the probes' noise
        # a duet run is not: what moved the machine under a duet acted on both its sides at once
        judged = bool(todo) and plan.order != "duet"
        again, exhausted = _reopen_late_points(plan, store, workloads) if judged else ([], 0)
        if again:
            measured = {u.key for u in todo}
            todo += [u for u in again if u.key not in measured]
            if exhausted == 0:
                what = "measured again: the machine changed under the run"
            elif exhausted == len(again):
                what = "measured once more: every attempt disturbed"
            else:
                what = "measured again at the run's end"
            _execute(plan, store, again, progress=progress, image=image, base_image=base_image, what=what)
    # the run folder each record came from, as `results.load_records` gives it: a figure drawn from these
    # records finds the machine's description in the folder's provenance
    records = store.consolidate().assign(source=str(store.root))
    failures = store.failures()
    if len(failures):
        warnings.warn(f"{len(failures)} unit(s) failed; see {store.root / 'failures.csv'}", Notice, stacklevel=2)
    return RunResult(plan, store.root, records, failures, len(todo), len(units) - len(todo))


def _reopen_late_points(plan: Plan, store: RunStore, workloads: list[Workload]) -> tuple[list[Unit], int]:
    """The points the run's end finds measured on another machine than the run's usual one, or disturbed
    in every attempt (`rejudge`): each made a discarded attempt with its reason, to be measured again;
    and how many of them are of the second kind."""
    late, kept = rejudge.to_measure_again(store.units(), plan.interference or interference.DEFAULT_RULE)
    if kept:
        warnings.warn(f"{plan.experiment}: {kept}", Notice, stacklevel=3)
    by_key = {u.key: u for u in plan_units(plan, workloads, store.extensions())}
    again, exhausted = [], 0
    for point in late:
        if point.key in by_key:
            store.reopen(point.key, point.reason)
            again.append(by_key[point.key])
            exhausted += point.exhausted
    if again:
        warnings.warn(
            f"{plan.experiment}: {len(again)} point(s) measured again ({late[0].key}: {late[0].reason}"
            + (", and others)" if len(again) > 1 else ")"),
            Notice,
            stacklevel=3,
        )
    return sorted(again, key=lambda u: u.position), exhausted


@contextlib.contextmanager
def _guarded(store: RunStore):
    """One process at a time in the run's folder; SIGTERM/SIGHUP unwind like Ctrl-C; on a stop the
    points measured so far are consolidated into records.csv before the interruption goes on."""
    with store.locked(), signals.stop_on_signals():
        try:
            yield
        except KeyboardInterrupt as exc:
            if isinstance(exc, signals.RunStopped):
                exc.run_root = str(store.root)
            store.consolidate()
            raise


def _execute(
    plan: Plan,
    store: RunStore,
    todo: list[Unit],
    *,
    progress: bool,
    image: str | None,
    base_image: str,
    what: str = "",
) -> None:
    session = provenance.Session.begin(naming.new_run_label(), plan.model_dump(mode="json"))
    session.purpose = what or None
    desc = f"{plan.experiment} ({plan.profile})" + (f": {what}" if what else "")
    bar = tqdm(total=len(todo), desc=desc, unit="point", disable=not progress)
    sut_cores = max((u.workload.sut_cores or 0) for u in todo) or None
    ports = free_ports(max(u.workload.ports_needed for u in todo))
    layout = cpus.split(sut_cores, ports)
    if plan.sut_host:  # another machine: its CPUs are its own, the client may use all of this one's
        layout = cpus.Layout(sut_cpus=[], client_cpus=cpus.available_cpus(), ports=ports)
    session.layout = {"sut_cpus": layout.sut_cpus, "client_cpus": layout.client_cpus, "ports": ports}
    peer = make_peer(plan, layout.client_cpus, session.run_label)
    try:
        with peer:
            session.add_peer(peer)
            # the point's CPUs: a client-server point's figure rests on the client's CPUs as much as the server's
            point_cpus = sorted({*layout.sut_cpus, *layout.client_cpus})
            probes = None if plan.sut_host else capacity.RunCapacity(point_cpus)
            context = RunContext(plan, store, peer, layout, session, bar, image, base_image, capacity=probes)
            for env_label, env_units in segments(todo):
                session.add_segment(env_label, env_units[0].position, env_units[-1].position)
                if env_units[0].pairing is not None:
                    run_duet(env_units, context)
                else:
                    _run_environment(env_label, env_units, context)
            session.add_commands(peer.commands)
    finally:
        bar.close()
        store.append_provenance(session.finish())


@dataclass
class DisturbedStreak:
    """The points in a row the run kept disturbed (each disturbed in every attempt it had). Past
    `Rule.weather_after` the disturbance is the machine's state rather than a burst between two attempts,
    so a disturbed point is kept after its first attempt (`interference.Rule`: why)."""

    count: int = 0

    def holds(self, rule: interference.Rule) -> bool:
        return rule.weather_after is not None and self.count >= rule.weather_after

    def reason(self, rule: interference.Rule) -> str:
        return (
            f"the {self.count} points before it were kept disturbed, the machine's state rather than a burst "
            f"(the rule's weather_after {rule.weather_after})"
        )

    def update(self, outcome: bool | None) -> None:
        """After a point: `outcome` True kept disturbed, False kept undisturbed, None failed (no news)."""
        if outcome is not None:
            self.count = self.count + 1 if outcome else 0


@dataclass
class RemeasureBudget:
    """The time a run's call spent on attempts it discarded (and on waiting for the machine to come back),
    beside the time its kept attempts took: past `Rule.remeasure_share` of it, a disturbed point is kept
    after its first attempt (`interference.Rule`: why)."""

    spent_s: float = 0.0
    kept_s: float = 0.0
    #: the spend a run may have before any point is kept (a first disturbed point still gets its attempts)
    allowance_s: float = 60.0

    def holds(self, rule: interference.Rule) -> str | None:
        """Why a disturbed attempt is kept at once now (None: it is measured again as the rule says)."""
        if rule.remeasure_share is None:
            return None
        limit = max(self.allowance_s, rule.remeasure_share * self.kept_s)
        if self.spent_s <= limit:
            return None
        return (
            f"the run's time for measuring again is spent ({self.spent_s:.0f} s discarded against {self.kept_s:.0f} s "
            f"kept; the rule's remeasure_share {rule.remeasure_share:g})"
        )


@dataclass(frozen=True)
class RunContext:
    """What every environment of one run shares, and the session that collects the run's provenance."""

    plan: Plan
    store: RunStore
    peer: Any
    layout: cpus.Layout
    session: provenance.Session
    bar: tqdm
    image: str | None  # None: the benchmark image built from base_image
    base_image: str
    #: the duration a time-bound point grew to for steady state, by workload and point: later
    #: repetitions and environments start there instead of growing again
    sizes: dict[tuple[str, str], float] = field(default_factory=dict)
    #: the machine's capacity probed around the points whose workload names a probe (None: the SUT is remote)
    capacity: capacity.RunCapacity | None = None
    #: points in a row kept disturbed: past the rule's `weather_after`, a disturbed point gets no more attempts
    streak: DisturbedStreak = field(default_factory=DisturbedStreak)
    #: the points' outcomes beside the bar
    progress: PointProgress = field(default_factory=PointProgress)
    #: the time spent measuring again, bounded by the rule's share of the kept points' time
    remeasuring: RemeasureBudget = field(default_factory=RemeasureBudget)


def _create_environment(label: str, layout: cpus.Layout, run: RunContext):
    """The environment of `label` on `layout`, not yet started."""
    plan = run.plan
    options: dict[str, Any] = {}
    if environments.parse_label(label).kind in IMAGE_KINDS:
        options["image"] = run.image or benchmark_image(run.base_image)
    if plan.sut_host:
        options.update(
            host=plan.sut_host,
            address=plan.sut_address,
            key_filename=plan.ssh_key,
            known_hosts=plan.known_hosts,
            docker_socket=plan.sut_docker_socket,
        )
        if "image" in options:  # shipped from this machine's engine when the remote one lacks it
            options.update(local_client=docker_client(), progress=not run.bar.disable)
    layout = layout if plan.sut_host else layout_with_free_ports(layout)
    return environments.create(
        label, layout, run_label=run.session.run_label, peer_reaches_nat=run.peer.reaches_nat, **options
    )


def _run_environment(label: str, units: list[Unit], run: RunContext) -> None:
    plan, store, peer, session, bar = run.plan, run.store, run.peer, run.session, run.bar
    placement = {"host": session.host_id, "peer": plan.peer_path}  # where the points ran
    if run.capacity is not None:  # the last segment's last probe was taken before this start
        run.capacity.forget_neighbour()
    clock = EnvironmentClock()
    try:
        env = _create_environment(label, run.layout, run)
        with env:
            clock.started()
            if plan.sut_host:  # the records name the machine that ran the system under test
                placement["host"] = session.add_sut_host(plan.sut_host, env)["host_id"]
            session.add_environment(label, env)
            write_libvirt = getattr(env, "write_libvirt_xml", None)
            if write_libvirt is not None:
                write_libvirt(store.root / "libvirt")
            for workload in dict.fromkeys(u.workload for u in units):
                with clock.preparing():
                    workload.prepare(env, peer)
                tools = specs.schema(plan.experiment).tools_of(workload.name)
                versions = {tool_versions.COLUMN: tool_versions.of_environment(session.tool_versions, label, *tools)}
                for unit in (u for u in units if u.workload is workload):
                    _run_unit(
                        unit,
                        env,
                        peer,
                        plan,
                        store,
                        {**placement, **versions},
                        run.sizes,
                        run.capacity,
                        run.streak,
                        run.remeasuring,
                    )
                    run.progress.point(bar, store, unit)
                with clock.preparing():
                    workload.finish(env, peer)
            try:  # again: what the workloads added (companions); an engine gone mid-run keeps the first
                session.environments[label] = env.describe()
            except (EnvironmentUnavailable, CommandFailed, *_engine_errors()):
                pass
            session.add_commands(env.commands)
            clock.stopping()
        clock.stopped(session, label)
    except (EnvironmentUnavailable, CommandFailed, *_engine_errors()) as exc:
        reason = f"{label} unavailable: {_reason(exc)}"
        for unit in units:
            if store.unit_status(unit.key) != "ok":
                store.save_failed(unit.key, reason, {"env": label, "finished": provenance.now()})
        bar.update(len(units))
        warnings.warn(reason, Notice, stacklevel=2)


def run_duet(units: list[Unit], run: RunContext) -> None:
    """One duet of a repetition: the baseline and its partner started on their halves of the CPUs (the
    halves swapped every repetition), each point measured on both sides at once, then both stopped.
    Each side has its own copy of a workload (a workload keeps what it prepared in an environment)."""
    plan, store, session, bar = run.plan, run.store, run.session, run.bar
    pairing = units[0].pairing
    labels = tuple(dict.fromkeys(u.env for u in units))
    halves = duet.halves(sorted({*run.layout.sut_cpus, *run.layout.client_cpus}))
    placement = {"host": session.host_id, "peer": plan.peer_path}
    clock = EnvironmentClock()
    try:
        with contextlib.ExitStack() as started:
            envs, ports = {}, list(run.layout.ports)
            for label in labels:
                half = next(u.pairing.half for u in units if u.env == label)
                layout = cpus.Layout(sut_cpus=halves[half], client_cpus=[], ports=ports)
                envs[label] = started.enter_context(_create_environment(label, layout, run))
                session.add_environment(label, envs[label])
                ports = free_ports(len(ports))  # the other side's servers bind ports of their own
            clock.started()
            for workload in dict.fromkeys(u.workload for u in units):
                own = {label: copy.copy(workload) for label in labels}
                tools = specs.schema(plan.experiment).tools_of(workload.name)
                versions = {}
                for label in labels:
                    with clock.preparing():
                        own[label].prepare(envs[label], run.peer)
                    found = tool_versions.of_environment(session.tool_versions, label, *tools)
                    versions[label] = {**placement, tool_versions.COLUMN: found}
                mine = [dataclasses.replace(u, workload=own[u.env]) for u in units if u.workload is workload]
                for pair in _pairs(mine):
                    _run_duet_point(pair, envs, versions, run)
                    for unit in pair:
                        run.progress.point(bar, store, unit)
                with clock.preparing():
                    for label in labels:
                        own[label].finish(envs[label], run.peer)
            for label in labels:
                session.add_commands(envs[label].commands)
            clock.stopping()
        clock.stopped(session, " + ".join(labels))
    except (EnvironmentUnavailable, CommandFailed, *_engine_errors()) as exc:
        reason = f"duet {pairing.duet} unavailable: {_reason(exc)}"
        for unit in units:
            if store.unit_status(unit.key) != "ok":
                store.save_failed(unit.key, reason, {"env": unit.env, "finished": provenance.now()})
        warnings.warn(reason, Notice, stacklevel=2)


def _pairs(units: list[Unit]) -> list[tuple[Unit, Unit]]:
    """A duet's units two by two: the baseline's and its partner's of one point."""
    by_point: dict[str, list[Unit]] = {}
    for unit in units:
        by_point.setdefault(_point_text(unit.point), []).append(unit)
    return [tuple(sorted(pair, key=lambda u: u.pairing.half)) for pair in by_point.values() if len(pair) == 2]


def _run_duet_point(pair: tuple[Unit, Unit], envs: dict, versions: dict, run: RunContext) -> None:
    """Both sides of one point at once, measured again together while only one side was disturbed (at
    most the rule's attempts). No capacity probes: what moves the machine's capacity moves both sides."""
    rule = run.plan.interference or interference.DEFAULT_RULE
    discarded = {u.key: run.store.attempts_of(u.key) for u in pair}
    first = max(len(d) for d in discarded.values()) + 1
    for attempt in range(first, max(rule.max_attempts, first) + 1):
        meeting = duet.Meeting((pair[0].env, pair[1].env))
        hold = run.remeasuring.holds(rule)
        began = time.monotonic()
        calls = [
            functools.partial(
                _attempt_unit,
                unit,
                envs[unit.env],
                run.peer,
                run.plan,
                run.store,
                versions[unit.env],
                attempt,
                discarded[unit.key],
                rule,
                hold=hold,
                meeting=(meeting, side),
            )
            for side, unit in enumerate(pair)
        ]
        done = all(kept for kept, _, _ in _both_at_once(calls, meeting))
        took = time.monotonic() - began
        if done:
            run.remeasuring.kept_s += took
            return
        run.remeasuring.spent_s += took


#: how long a stopped duet waits for its other side's thread once its commands were ended
STOPPED_SIDE_JOIN_S = 30.0


def _both_at_once(calls: list, meeting: duet.Meeting) -> list:
    """Run the two sides' calls in two threads and return their results. A side that ends (or fails)
    releases the other at the meeting; a stop (Ctrl-C, SIGTERM) ends both sides' commands before it goes on."""
    results: list = [None, None]
    errors: list[BaseException | None] = [None, None]

    def side(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
            errors[index] = exc
        finally:
            meeting.abort()

    threads = [threading.Thread(target=side, args=(i,), name=f"kit-duet-side{i}", daemon=True) for i in (0, 1)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    except BaseException:
        meeting.abort()
        procs.kill_running()
        for thread in threads:
            thread.join(STOPPED_SIDE_JOIN_S)
        raise
    for error in errors:
        if error is not None:
            raise error
    return results


class EnvironmentClock:
    """How long one start of an environment (or a duet's two) takes to start, to prepare its workloads
    and to stop: the harness's share of environments in a run's timing (`kitlib.core.timing`)."""

    def __init__(self) -> None:
        self._began = time.monotonic()
        self.start_s = self.prepare_s = 0.0
        self._stopping: float | None = None

    def started(self) -> None:
        self.start_s = time.monotonic() - self._began

    @contextlib.contextmanager
    def preparing(self):
        began = time.monotonic()
        try:
            yield
        finally:
            self.prepare_s += time.monotonic() - began

    def stopping(self) -> None:
        self._stopping = time.monotonic()

    def stopped(self, session: provenance.Session, label: str) -> None:
        stop_s = time.monotonic() - self._stopping if self._stopping is not None else 0.0
        session.add_environment_seconds(label, self.start_s, self.prepare_s, stop_s)


def layout_with_free_ports(layout: cpus.Layout) -> cpus.Layout:
    """The run's layout for the next environment, a port still held replaced by a free one: the
    connections of a server that exited under the previous environment (a system call a sandbox
    lacks) stay bound for up to a minute after nothing listens, and no server can bind the port."""
    held = [port for port in layout.ports if not is_free(port)]
    if not held:
        return layout
    fresh = dict(zip(held, free_ports(len(held)), strict=True))
    return dataclasses.replace(layout, ports=[fresh.get(port, port) for port in layout.ports])


def _run_unit(
    unit: Unit,
    env,
    peer,
    plan: Plan,
    store: RunStore,
    placement: dict[str, Any] | None = None,
    sizes: dict[tuple[str, str], float] | None = None,
    probes: capacity.RunCapacity | None = None,
    streak: DisturbedStreak | None = None,
    budget: RemeasureBudget | None = None,
) -> None:
    """Measure the point, again while the interference rule finds it disturbed or, for a time-bound
    point, the steady-state rule finds it too short (then for longer), at most max_attempts times:
    every discarded attempt is kept as units/<key>.attempt<N>.json with its reason. After an attempt
    the capacity probes found on a slowed machine, the next waits for the machine to come back
    (`RunCapacity.recover`, bounded), so it does not land in the same dip. Where the points before it
    were kept disturbed (`streak`), a disturbed attempt is kept at once. A point measured again later
    in its run (`rejudge`) counts on from the attempts it already has. Once the run's time for measuring
    again is spent (`budget`), a disturbed attempt is kept at once too, and nothing waits for the machine."""
    rule = plan.interference or interference.DEFAULT_RULE
    budget = RemeasureBudget() if budget is None else budget
    sizes = {} if sizes is None else sizes
    size_key = (unit.workload.name, json.dumps(unit.point, sort_keys=True, default=str))
    profile_s = unit.workload.profile_seconds()
    seconds = max(profile_s, sizes.get(size_key, 0.0)) if profile_s is not None else None
    discarded = store.attempts_of(unit.key)
    kind = unit.workload.probe_kind(unit.point) if probes is not None else None
    first = len(discarded) + 1
    streak = DisturbedStreak() if streak is None else streak
    for attempt in range(first, max(rule.max_attempts, first) + 1):
        hold = streak.reason(rule) if streak.holds(rule) else budget.holds(rule)
        began = time.monotonic()
        kept, grown, outcome = _attempt_unit(
            unit, env, peer, plan, store, placement, attempt, discarded, rule, seconds, probes, hold
        )
        if grown is not None:
            seconds = sizes[size_key] = max(grown, sizes.get(size_key, 0.0))
        if kept:
            budget.kept_s += time.monotonic() - began
            streak.update(outcome)
            return
        slowed = interference.SLOWED in discarded[-1]["reason"]
        if kind and rule.min_capacity_pct is not None and slowed and budget.holds(rule) is None:
            recovered = probes.recover(kind, rule.capacity_floor(probes.spread_pct(kind)))
            probes.forget_neighbour()  # the slowed attempt's last probe is no figure for the next one's start
            if recovered is not None:  # the next attempt waits for the machine to come back (bounded)
                discarded[-1]["waited_for_capacity_s"], discarded[-1]["capacity_back"] = recovered
        budget.spent_s += time.monotonic() - began


def _attempt_unit(
    unit: Unit,
    env,
    peer,
    plan: Plan,
    store: RunStore,
    placement: dict[str, Any] | None,
    attempt: int,
    discarded: list[dict[str, Any]],
    rule: interference.Rule,
    seconds: float | None = None,
    probes: capacity.RunCapacity | None = None,
    hold: str | None = None,
    meeting: tuple[duet.Meeting, int] | None = None,
) -> tuple[bool, float | None, bool | None]:
    """One attempt: (whether it is the one that counts, or the point failed; the longer duration the
    steady-state rule asks for, or None; whether the kept attempt was disturbed, None where the point
    failed). An attempt that does not count is kept aside. `hold`: why a disturbed attempt is kept at
    once (a streak of disturbed points before it, the run's time for measuring again spent), or None.
    `meeting`: a duet side's meeting with the other side and its index: the measuring starts behind the
    duet's barrier, and the attempt is measured again only when one side alone was disturbed."""
    info: dict[str, Any] = {
        "env": unit.env,
        "workload": unit.workload.name,
        "point": unit.point,
        "repetition": unit.repetition,
        "position": unit.position,
        "started": provenance.now(),
    }
    if unit.pairing is not None:  # its tool time is shared with the other side's (`timing.store_tool_time`)
        info["duet"] = unit.pairing.duet
    bookkeeping = {**(placement or {}), "position": unit.position, "started": info["started"]}
    if plan.ci_alpha is not None:  # a run that may grow: every interval on its records at the looks' level
        bookkeeping[sequential.COLUMN] = plan.ci_alpha
    mark = len(env.commands), len(peer.commands)
    started = time.monotonic()
    raw = None
    grown = None
    kind = unit.workload.probe_kind(unit.point) if probes is not None else None
    probed_s = probes.spent_s if probes is not None else 0.0
    try:
        before = probes.before(kind) if kind else None
        with _sampler(unit, env, plan) as sampler:
            if meeting is not None:
                meeting[0].start(meeting[1])
            span_start = time.monotonic()
            if seconds is None:
                raw = unit.workload.measure(env, peer, unit.point)
            else:
                raw = unit.workload.measure(env, peer, unit.point, seconds=seconds)
            span = (span_start, time.monotonic())
        figures = sampler.figures if sampler is not None else None
        own_unknown = getattr(sampler, "own_unknown", None) if figures is not None else None
        probed = None
        if kind and figures is not None:
            after = probes.after(kind)
            figures = dataclasses.replace(
                figures,
                capacity_pct=probes.share_pct(kind, before, after),
                capacity_spread_pct=probes.spread_pct(kind),
            )
            probed = rejudge.readings(kind, before, after, probes.usual(kind))
        disturbed = rule.reasons(figures)
        steady_rule = plan.steady or steady.DEFAULT_RULE
        if meeting is not None:  # both sides decide alike, from what each saw
            share, theirs = meeting[0].exchange(meeting[1], span, disturbed)
            bookkeeping.update(duet.columns(unit.pairing, env.layout.sut_cpus, share, theirs))
        measurements, series = _read(unit, raw, store, sized=seconds is not None)
        found, unsteady, grown = _steadiness(unit, series, steady_rule, seconds)
        again = disturbed + (unsteady if grown is not None else [])
        if meeting is not None:  # both sides hold alike: the budget is the run's, read before the attempt
            again, grown = ([] if hold is not None else duet.remeasure_reasons(disturbed, theirs)), None
        held = bool(disturbed) and hold is not None and attempt < rule.max_attempts
        last = not again or attempt >= rule.max_attempts or held
        key = unit.key if last else f"{unit.key}.attempt{attempt}"
        info["raw_files"] = store.save_raw(key, {**raw.outputs, **raw.series})
        quality = {
            **_quality_columns(figures, attempt, len(discarded), bool(disturbed)),
            **steady.columns(found, None if found is None and not unsteady else not unsteady, seconds),
        }
        records = place(
            measurements,
            experiment=plan.experiment,
            workload=unit.workload.name,
            env=unit.env,
            run_id=plan.run_id,
            repetition=unit.repetition,
            params={
                **option_columns(env.spec.options),
                **unit.workload.record_params(unit.point),
                **raw.facts,
                **bookkeeping,
                **quality,
            },
        )
        elapsed = round(time.monotonic() - started, 3)
        info.update(_unit_commands(env, peer, mark), seconds=elapsed, finished=provenance.now())
        info["tool_seconds"] = tool_seconds(info["commands"], elapsed)
        if probes is not None:  # the harness's probes around this attempt (a neighbour's shared one costs none)
            info["probe_seconds"] = round(probes.spent_s - probed_s, 3)
        info["interference"] = {
            "figures": figures.as_dict() if figures else None,
            rejudge.ENTRY: probed,
            "sampler_error": sampler.error if sampler is not None else "not sampled: the system under test is remote",
            "own_cpu_unknown": own_unknown,
            "rule": rule.model_dump(mode="json"),
            "disturbed": disturbed,
            "attempt": attempt,
            "discarded_attempts": discarded,
        }
        if held:
            info["interference"][rejudge.HELD] = f"kept after attempt {attempt}: {hold}"
        if found is not None or unsteady:  # a point whose parts all lacked a tick still says why
            info["steady"] = {
                "rule": steady_rule.model_dump(mode="json"),
                "warmup_method": found.method if found else None,
                "intervals": found.intervals if found else 0,
                "interval_s": found.interval_s if found else None,
                "point_seconds": seconds,
                "unsteady": unsteady,
                "next_seconds": grown,
            }
        if not last:
            parts = [f"disturbed: {'; '.join(disturbed)}"] if disturbed else []
            if meeting is not None:
                parts = list(again)
            if grown is not None:
                parts.append(f"unsteady at {seconds:g} s: {'; '.join(unsteady)}; next {grown:g} s")
            reason = "; ".join(parts)
            store.save_attempt(unit.key, attempt, reason, records, info)
            discarded.append({"attempt": attempt, "file": f"units/{key}.json", "reason": reason})
            return False, grown, None
        store.save_ok(unit.key, records, info)
        return True, None, bool(disturbed)
    except (CommandFailed, ParseError, KitError, *_engine_errors()) as exc:
        info.update(_unit_commands(env, peer, mark), finished=provenance.now(), traceback=traceback.format_exc(limit=3))
        if discarded:
            info["interference"] = {"attempt": attempt, "discarded_attempts": discarded}
        state = _environment_state(env) or "; ".join(_exited_services(env))
        store.save_failed(unit.key, f"{state}; {_reason(exc)}" if state else _reason(exc), info)
    return True, None, None


def _read(
    unit: Unit, raw: RawResult, store: RunStore, sized: bool
) -> tuple[list, Intervals | dict[str, Intervals] | None]:
    """The point's measurements and, where it is sized for steady state, its sub-intervals. Output that
    does not parse fails the point; it is kept under the point's own name for the reader of the error."""
    source = str(store.raw_dir / unit.key)
    try:
        return unit.workload.parse(raw, source), unit.workload.intervals(raw, source) if sized else None
    except ParseError:
        store.save_raw(unit.key, {**raw.outputs, **raw.series})
        raise


def _steadiness(
    unit: Unit, series: Intervals | dict[str, Intervals] | None, rule: steady.Rule, seconds: float | None
) -> tuple[steady.Steadiness | None, list[str], float | None]:
    """What the point's sub-intervals say (None where it is not sized), why it is not steady enough,
    and the longer duration that would be (None: not needed, or already the longest allowed). A single
    series is read as one unnamed part. A point of named parts is steady when each part is; its
    figures are the worst part's (`steady.worst`), its reasons name the part."""
    if seconds is None or not series:
        return None, [], None
    profile_s = unit.workload.profile_seconds()
    named = isinstance(series, dict)
    parts, unsteady, grown = {}, [], None
    for name, (values, interval_s) in (series if named else {"": series}).items():
        prefix = f"{name}: " if named else ""
        if not len(values):
            unsteady.append(f"{prefix}no sub-interval (shorter than one)")
            continue
        parts[name] = steady.assess(values, interval_s)
        said = steady.reasons(rule, parts[name])
        unsteady += [prefix + reason for reason in said]
        longer = steady.longer(rule, parts[name], seconds, profile_s) if said else None
        grown = max((g for g in (grown, longer) if g is not None), default=None)
    if not parts:
        return None, unsteady, None
    return (steady.worst(parts) if named else parts[""]), unsteady, grown


def _sampler(unit: Unit, env, plan: Plan):
    """The point's interference sampler over this host, or a null context for a remote system under
    test (this host is then only the client's; its figures would describe the wrong machine)."""
    if plan.sut_host:
        return contextlib.nullcontext()
    # a duet's other side is the run's own too: a container beside a native side is not another's work
    sides = [unit.env] if unit.pairing is None else [unit.env, unit.pairing.partner]
    local_engine = any(environments.parse_label(label).kind == "docker" for label in sides)
    ownership = interference.Ownership(
        engine=local_engine, is_own_container=interference.docker_container_check() if local_engine else None
    )
    sut_cpus = getattr(getattr(env, "layout", None), "sut_cpus", None)
    lxc = environments.parse_label(unit.env).kind == "lxc"
    return interference.PointSampler(sut_cpus, ownership, own_unknown=interference.LXC_OWN_UNKNOWN if lxc else None)


def _quality_columns(figures, attempt: int, discarded: int, disturbed: bool) -> dict[str, Any]:
    """The record columns of the point's measurement quality; missing figures stay missing."""
    columns = figures.columns() if figures is not None else dict.fromkeys(interference.COLUMNS)
    return {**columns, "attempt": attempt, "discarded_attempts": discarded, "disturbed": disturbed}


def _engine_errors() -> tuple[type[BaseException], ...]:
    """What an engine or a guest that went away mid-run raises: its container killed, its daemon
    stopped, its SSH connection lost. The point fails with the reason and the run goes on."""
    import docker.errors
    import paramiko
    import requests

    return (docker.errors.DockerException, requests.exceptions.RequestException, paramiko.SSHException, OSError)


#: how long a failed point waits for the engine to report its container's end
STATE_SETTLE_S = 3.0


def _environment_state(env) -> str:
    """Why a container environment's point failed, where the engine knows: its container stopped
    (killed, out of memory) or the engine itself no longer answers. "" when it looks healthy."""
    env = getattr(env, "inner", None) or env
    container = getattr(env, "container", None)
    if container is None:
        return ""
    deadline = time.monotonic() + STATE_SETTLE_S  # the engine records a killed container's exit a moment later
    while True:
        try:
            container.reload()
        except Exception as exc:  # noqa: BLE001 - any failure to ask is the answer
            import docker.errors

            if isinstance(exc, docker.errors.NotFound):
                return f"{env.label}: its container {container.name} no longer exists"
            return f"{env.label}: the Docker engine does not answer ({type(exc).__name__}: {str(exc)[:160]})"
        state = container.attrs.get("State") or {}
        if state.get("Status") != "running":
            break
        if time.monotonic() > deadline:
            return ""
        time.sleep(0.5)
    return (
        f"{env.label}: its container {container.name} is {state.get('Status')} (exit code {state.get('ExitCode')}"
        + (", killed for lack of memory" if state.get("OOMKilled") else "")
        + ")"
    )


def _exited_services(env) -> list[str]:
    """The environment's servers that died during the failed point (nothing for a kind that holds none)."""
    exited = getattr(env, "exited_services", None)
    return exited() if exited is not None else []


def _reason(exc: BaseException) -> str:
    """A failure's reason as failures.csv shows it: the kit's own message, or the engine's error named."""
    if isinstance(exc, KitError):
        return str(exc)
    text = str(exc).strip() or repr(exc)
    return f"{type(exc).__name__}: {text}"


def tool_seconds(commands: list[dict[str, Any]], wall: float) -> float:
    """Time the unit's own commands ran (the benchmark and its per-point commands), at most the unit's wall
    time (a client may run while another command does); the rest of a run is the harness's. A unit that
    ran no command measured through an engine's API (container start-up): its wall time is the tool's."""
    timed = [c["seconds"] for c in commands if c.get("seconds") is not None]
    return round(min(wall, sum(timed)) if timed else wall, 3)


def _unit_commands(env, peer, mark: tuple[int, int]) -> dict[str, Any]:
    return {"commands": env.commands[mark[0] :] + peer.commands[mark[1] :]}


@functools.lru_cache(maxsize=4)
def benchmark_image(base_image: str) -> str:
    return ensure_image(docker_client(), base_image)
