"""`--until-decided`: after a run's first repetitions, the repetitions up to its next look of what
undecided claims need, the most promising first, until every claim that can be decided is, or the budget
is spent.

The run's claims are looked at only at the counts of repetitions its plan's schedule names (3, 5, 8, 13,
21 from 3), and a run grows from one look to the next in one step, so no verdict is read between two
looks (`kitlib.core.sequential` keeps their intervals valid over these looks).

An inconclusive claim is a candidate when its evidence names the runs a side that would likely decide it
(80% power at the looks' level) and that number, at the hopeful end of the spread its runs allow
(`sequential.out_of_reach`), is within the run's `max_repetitions`; a claim needing more is left
undecided, said so. Each candidate names the environments and workloads its verdict rests on, so a
repetition adds exactly those. Candidates are
grouped by run; the run chosen next is the one with the most expected progress per minute: the sum
over its candidates of 1 / (runs still needed), divided by the minutes its step to the next look takes
(the repetitions of that step × the minutes one repetition of their environments and workloads took in
this run so far). A step that does not fit the budget left is not begun. Before the first step, a run
whose step to its next look cannot fit in the time left at all ends its looks at its first, which then
spends all of α (`end_looks_out_of_time`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

import kitlib
from kitlib.analyse import claims
from kitlib.analyse.claims.core import INCONCLUSIVE
from kitlib.core import paths, sequential
from kitlib.core.parameters import as_path, as_seconds
from kitlib.measure import estimate
from kitlib.measure.planning import Plan
from kitlib.measure.run.runner import RunResult, likely_search_units, plan_units, run_plan
from kitlib.measure.store import RunStore
from kitlib.notebook_cells import plan_arguments
from kitlib.results import load_records

#: seconds an environment's start and stop add to a repetition, beyond its points (a container, a
#: namespace path; a VM's boot is measured in its own points' harness time, not here)
ENVIRONMENT_OVERHEAD_S = 5.0


@dataclass(frozen=True)
class Candidate:
    """An undecided claim of a run that more runs would likely decide."""

    claim: str
    n: int
    needed: int
    envs: tuple[str, ...]
    workloads: tuple[str, ...]


@dataclass(frozen=True)
class Choice:
    """The next step: which run, from which repetition and how many (to its next look), which
    environments and workloads, why, and its expected cost."""

    plan: Plan
    root: Path
    repetition: int
    count: int
    envs: list[str]
    workloads: list[str]
    claims: list[str]
    seconds: float
    score: float


def repetitions_of(plan: Plan, store: RunStore) -> int:
    """Repetitions the run has: the plan's and those added since (a search's points add none)."""
    return plan.repetitions + len(store.added_repetitions())


def verdicts_of(plan: Plan, records: pd.DataFrame) -> pd.DataFrame:
    """The run's claims on its own records (one host; `results.load_records` gives them their order)."""
    return claims.evaluate_all(records, experiment=plan.experiment) if len(records) else pd.DataFrame()


def candidates(plan: Plan, verdicts: pd.DataFrame, workloads: list[str]) -> tuple[list[Candidate], list[str]]:
    """The run's undecided claims more runs would likely decide within its limit, and, in words, those
    that would need more than it allows."""
    assert plan.until_decided is not None
    limit = plan.until_decided.max_repetitions
    found, beyond = [], []
    for _, row in verdicts[verdicts["status"] == INCONCLUSIVE].iterrows() if len(verdicts) else []:
        needed = row["needed"]
        if needed is None or pd.isna(needed):
            continue
        if sequential.out_of_reach(int(needed), int(row["n"]), limit):
            beyond.append(
                f"{row['claim']}: about {int(needed)} runs a side needed (from {int(row['n'])}; more than "
                f"{limit} even at the low end of the spread those allow)"
            )
            continue
        envs = tuple(e for e in (row["envs"] or ()) if e in plan.environments) or tuple(plan.environments)
        chosen = tuple(w for w in (row["workloads"] or ()) if w in workloads) or tuple(workloads)
        found.append(Candidate(row["claim"], int(row["n"]), int(needed), envs, chosen))
    return found, beyond


def unit_seconds(store: RunStore) -> dict[tuple[str, str], float]:
    """Mean seconds of a measured point by environment and workload, from the run's unit files."""
    found: dict[tuple[str, str], list[float]] = {}
    for unit in store.units():
        if unit.get("status") == "ok" and unit.get("seconds") is not None:
            found.setdefault((str(unit.get("env")), str(unit.get("workload"))), []).append(float(unit["seconds"]))
    return {key: sum(v) / len(v) for key, v in found.items()}


def repetition_seconds(
    plan: Plan, envs: list[str], workloads: list[str], points: dict[str, int], timing: dict[tuple[str, str], float]
) -> float:
    """Seconds one repetition of these environments and workloads took in this run (points × their mean)."""
    total = 0.0
    for env in envs:
        known = [timing[(env, w)] * points.get(w, 1) for w in workloads if (env, w) in timing]
        total += sum(known) + ENVIRONMENT_OVERHEAD_S
    return total


def with_last_look(plan: Plan, last: int) -> Plan:
    """The same plan with its schedule of looks ending at `last` repetitions (a look of its schedule)."""
    assert plan.until_decided is not None
    stopping = plan.until_decided.model_copy(update={"max_repetitions": last})
    return type(plan).model_validate({**plan.model_dump(), "until_decided": stopping})


def looks_within(plan: Plan, seconds_left: float, repetition_s: float, begun: Callable[[Plan], bool]) -> Plan:
    """The plan with its schedule cut at the last look the budget could reach: `seconds_left` after the
    profile's repetitions, one repetition of what its claims compare costing about `repetition_s`; both
    forecast before anything is measured, so the cut rests on no measured value and every interval keeps
    its level. It matters because each look costs every interval its share of α (α/K for K looks): a
    look the budget never reaches only widens them, and at 3 runs a side an interval at 99% (K = 5) is
    1.66 times as wide as at 95% (K = 1). A run of this plan already `begun` with another cut keeps it,
    so that an interrupted run resumes where it was."""
    stopping = plan.until_decided
    if stopping is None:
        return plan
    points = stopping.look_points(plan.repetitions)
    for last in points:
        cut = plan if last == stopping.max_repetitions else with_last_look(plan, last)
        if begun(cut):
            return cut
    reachable = [p for p in points if (p - plan.repetitions) * repetition_s <= max(seconds_left, 0.0)]
    return plan if reachable[-1] == stopping.max_repetitions else with_last_look(plan, reachable[-1])


def share_budget(schedules: Mapping[str, tuple[list[int], float]], seconds_left: float) -> dict[str, float]:
    """The seconds of `seconds_left` each run may plan its looks for (`looks_within`), shared so that the
    looks planned together fit in it: each run's schedule (its look points) and the seconds one repetition
    of it takes, by name. Every planned look costs each interval of its run a share of α, so a look that
    counts on time another run's looks count on too only widens intervals: with a few minutes left after
    the profile, eleven runs each planning for all of them would all pay α/2 at their first look, while
    one or two could grow. In rounds, every run's step to its next look, the cheapest first, while it fits
    in what is left: as many runs as the time allows get a second look. From the forecasts alone, so no
    measured value sets a level."""
    reached = {name: 0 for name in schedules}
    left = max(seconds_left, 0.0)
    while True:
        steps = sorted(
            ((points[reached[name] + 1] - points[reached[name]]) * repetition_s, name)
            for name, (points, repetition_s) in schedules.items()
            if reached[name] + 1 < len(points)
        )
        taken = False
        for cost, name in steps:
            if cost <= left:
                left -= cost
                reached[name] += 1
                taken = True
        if not taken:
            break
    # as `looks_within` reckons a look's cost: its repetitions past the first look's, times one's seconds
    return {
        name: (points[reached[name]] - points[0]) * repetition_s for name, (points, repetition_s) in schedules.items()
    }


def forecast_seconds(
    plan: Plan,
    calibrated=None,
    envs: list[str] | None = None,
    repetition: int | None = None,
    with_history: bool = True,
    workloads: Collection[str] | None = None,
    history_root: Path | None = None,
) -> float:
    """Seconds the plan's points take here, done or not (those of `envs`, of `workloads` and of one
    `repetition` where given), by `kitlib.measure.estimate`: what a plan's looks are fitted to before
    anything runs (`with_history=False`: from the models alone, none of this host's points; else the
    points under `history_root`, by default the results folder)."""
    units = [
        unit
        for unit in plan_units(plan)
        if (envs is None or unit.env in envs)
        and (repetition is None or unit.repetition == repetition)
        and (not workloads or unit.workload.name in workloads)
    ]
    searched = likely_search_units(plan, units) if repetition is None else []
    found = estimate.estimate(
        plan, units + searched, calibrated=calibrated, with_history=with_history, history_root=history_root
    )
    return found.total


def compared_environments(plan: Plan) -> list[str]:
    """The environments a run's claims compare, whose repetitions a look costs: all but those it surveys
    (all of them where it surveys every one, as a run whose claims the kit cannot test)."""
    return [env for env in plan.environments if env not in plan.survey] or list(plan.environments)


def begun(plan: Plan, results_root: Path | None = None) -> bool:
    """Whether this plan's run has measured anything already (its folder holds unit files)."""
    return any(RunStore(paths.run_folder(plan, results_root)).units_dir.glob("*.json"))


def fit_to_budget(plan: Plan, budget_s: float, results_root: Path | None = None, say=print) -> Plan:
    """A plan made `until_decided` with its looks cut where its budget ends (`looks_within`), from the
    forecast of the whole run and of one repetition; said in one line, since the looks set the level."""
    if plan.until_decided is None:
        return plan
    left = budget_s - forecast_seconds(plan)
    fitted = looks_within(plan, left, forecast_seconds(plan, repetition=0), lambda p: begun(p, results_root))
    say(f"{plan.experiment}: {looks_text(fitted)}, for a budget of {budget_s / 60:.0f} min")
    return fitted


def end_looks_out_of_time(plan: Plan, root: Path, seconds_left: float, say: Callable[[str], None] = print) -> bool:
    """End the looks of a run still at its first one when the time left cannot pay for its step to the
    next (one repetition of the environments it compares, by the models' forecast): it will not grow
    whatever its claims read, so its first look is its last and spends all of α (95% by default) instead of its
    share (`kitlib.core.sequential`). Decided from the clock and the forecast before any verdict of the
    run is read, so the level rests on no measured value of its. Returns whether it ended them."""
    stopping = plan.until_decided
    store = RunStore(root)
    have = repetitions_of(plan, store)
    if stopping is None or have != plan.repetitions or store.looks_ended() is not None:
        return False
    step_to = stopping.next_look(plan.repetitions, have)
    if step_to is None:
        return False
    repetition_s = forecast_seconds(plan, envs=compared_environments(plan), repetition=0, with_history=False)
    step_s = (step_to - have) * repetition_s
    if step_s <= seconds_left:
        return False
    why = (
        f"{max(seconds_left, 0.0):.0f} s left, its step to the look at {step_to} about {step_s:.0f} s "
        f"({step_to - have} × {repetition_s:.0f} s forecast): no further look, so this one is at "
        f"{100 * (1 - stopping.alpha):.4g}%"
    )
    store.end_looks(have, stopping.alpha, why)
    store.consolidate()
    say(f"{plan.experiment}: looks end at {have} repetitions ({why})")
    return True


def notebook_plan(experiment: str, namespace: Mapping[str, Any]) -> Plan:
    """`kitlib.notebook_plan`: the plan of a notebook's parameters, its looks fitted to the notebook's
    `budget` (unless `plan_file` handed a plan made already), so that the plan shown is the plan run."""
    made = kitlib.plan(experiment, **plan_arguments(experiment, namespace))
    budget = namespace.get("budget")
    if budget is None or namespace.get("plan_file") is not None:
        return made
    return fit_to_budget(made, as_seconds("budget", budget), as_path("results_dir", namespace.get("results_dir")))


def looks_text(plan: Plan) -> str:
    """'looks at 3, 5, 8 (each interval at 98.33%)' or 'one look at 3 (95%)', for a person reading the plan."""
    if plan.until_decided is None:
        return f"fixed at {plan.repetitions} (95%)"
    points = plan.until_decided.look_points(plan.repetitions)
    level = f"{100 * (1 - plan.until_decided.look_alpha(plan.repetitions)):.4g}%"
    if len(points) == 1:
        return f"one look at {points[0]} ({level})"
    return f"looks at {', '.join(map(str, points))} (each interval at {level})"


def choose(runs: list[tuple[Plan, Path]], budget_left_s: float) -> tuple[Choice | None, list[str]]:
    """The repetition expected to decide most per minute within the budget, and notes on what cannot
    be decided within the runs' limits."""
    from kitlib.measure import experiments

    best: Choice | None = None
    notes: list[str] = []
    for plan, root in runs:
        if plan.until_decided is None:
            continue
        store = RunStore(root)
        if store.looks_ended() is not None:
            continue
        have = repetitions_of(plan, store)
        workload_objects = experiments.workloads_of(plan)
        names = [w.name for w in workload_objects]
        found, beyond = candidates(plan, verdicts_of(plan, load_records(root)), names)  # run_plan consolidated them
        notes += [f"{plan.experiment}: {line}" for line in beyond]
        step_to = plan.until_decided.next_look(plan.repetitions, have)
        if found and step_to is None:
            names_left = ", ".join(c.claim for c in found)
            notes.append(f"{plan.experiment}: {names_left} undecided at the run's limit of {have} repetitions")
        if not found or step_to is None:
            continue
        envs = sorted({e for c in found for e in c.envs})
        workloads = sorted({w for c in found for w in c.workloads})
        points = {w.name: len(w.points()) for w in workload_objects}
        count = step_to - have
        seconds = count * repetition_seconds(plan, envs, workloads, points, unit_seconds(store))
        if seconds > budget_left_s:
            notes.append(
                f"{plan.experiment}: its step to the look at {step_to} repetitions ({count} × "
                f"{seconds / count:.0f} s) does not fit the budget left"
            )
            continue
        score = sum(1.0 / max(1, c.needed - c.n) for c in found) / max(seconds / 60.0, 1e-3)
        if best is None or score > best.score:
            why = [c.claim for c in found]
            best = Choice(plan, root, have, count, envs, workloads, why, seconds, score)
    return best, notes


@dataclass
class Report:
    """What the adaptive phase did: each added repetition, and the claims left undecided, why."""

    added: list[dict[str, Any]]
    notes: list[str]
    seconds: float


def extend_until_decided(
    runs: list[tuple[Plan, Path]],
    budget_s: float,
    run: Callable[[Plan], Any],
    say: Callable[[str], None] = print,
) -> Report:
    """Add repetitions to these runs (each a plan made `--until-decided` and its results folder), a step
    to a run's next look at a time, until no candidate is left or the budget is spent; `run(plan)`
    measures what the plan's folder lacks. `added` holds one entry per repetition."""
    started = time.monotonic()
    for plan, root in runs:
        end_looks_out_of_time(plan, root, budget_s, say)
    added: list[dict[str, Any]] = []
    notes: list[str] = []
    while True:
        left = budget_s - (time.monotonic() - started)
        choice, notes = choose(runs, left)
        if choice is None:
            break
        store = RunStore(choice.root)
        step = list(range(choice.repetition, choice.repetition + choice.count))
        for repetition in step:  # written before they run, so an interrupted step resumes whole
            store.add_extension(repetition, choice.envs, choice.workloads, choice.claims)
        numbers = f"{step[0] + 1}" if len(step) == 1 else f"{step[0] + 1}–{step[-1] + 1}"
        say(
            f"{choice.plan.experiment}: repetition{'s' if len(step) > 1 else ''} {numbers} (to the look at "
            f"{step[-1] + 1}) of {', '.join(choice.envs)} ({', '.join(choice.workloads)}), about "
            f"{choice.seconds:.0f} s, for {', '.join(choice.claims)}"
        )
        begun = time.monotonic()
        run(choice.plan)
        seconds = time.monotonic() - begun
        added += [
            {
                "experiment": choice.plan.experiment,
                "repetition": repetition,
                "environments": choice.envs,
                "workloads": choice.workloads,
                "claims": choice.claims,
                "estimated_s": round(choice.seconds / choice.count, 1),
                "seconds": round(seconds / choice.count, 1),
            }
            for repetition in step
        ]
    return Report(added, notes, time.monotonic() - started)


def host_records(plan: Plan, results: Path) -> pd.DataFrame:
    """This host's earlier records of the plan's experiment under `results` (empty where there are none):
    what `predict` and `kitlib.outlook` read the noise from. Only runs of the plan's design: a duet run's
    spread is the within-duet ratios', not the one-at-a-time runs'."""
    folder = results / plan.experiment
    records = load_records(folder) if folder.is_dir() and any(folder.glob("*/records.csv")) else pd.DataFrame()
    if "host" in records.columns:
        records = records[records["host"].astype(str) == str(plan.host)]
    if "order" in records.columns:
        in_duets = records["order"].astype(str) == "duet"
        records = records[in_duets if plan.order == "duet" else ~in_duets]
    return records


def verdicts_at_its_level(plan: Plan, records: pd.DataFrame) -> pd.DataFrame:
    """The plan's claims on these records, each interval at the level the plan's looks keep."""
    alpha = plan.ci_alpha if plan.ci_alpha is not None else sequential.ALPHA
    return verdicts_of(plan, records.assign(**{"ci_alpha": alpha}))


def predict(plan: Plan, results: Path) -> tuple[pd.DataFrame, str]:
    """For `--dry-run`: each claim of the plan's experiment read on this host's earlier records of it
    (`host_records`), its intervals taken at the level the plan's looks keep, with the runs a side that
    would likely decide it and the minutes that many repetitions of its environments would take. Returns
    the table and where the noise was read from ('' when there is no earlier run here)."""
    from kitlib.measure import experiments

    records = host_records(plan, results)
    if records.empty:
        return pd.DataFrame(), ""
    verdicts = verdicts_at_its_level(plan, records)
    sources = sorted(set(records["source"]))
    timing: dict[tuple[str, str], float] = {}
    for source in sources:
        timing.update(unit_seconds(RunStore(Path(source))))
    workload_objects = experiments.workloads_of(plan)
    points = {w.name: len(w.points()) for w in workload_objects}
    rows = []
    for _, row in verdicts.iterrows():
        needed = row["needed"] if row["status"] == INCONCLUSIVE and pd.notna(row["needed"]) else None
        envs = [e for e in (row["envs"] or ()) if e in plan.environments] or list(plan.environments)
        chosen = [w for w in (row["workloads"] or ()) if w in points] or list(points)
        per_repetition = repetition_seconds(plan, envs, chosen, points, timing)
        extra = max(0, looked_at(plan, int(needed)) - plan.repetitions) if needed is not None else 0
        rows.append(
            {
                "claim": row["claim"],
                "now": row["status"],
                "runs_needed": int(needed) if needed is not None else None,
                "within_limit": None
                if needed is None
                else int(needed) <= plan.until_decided.max_repetitions
                if plan.until_decided
                else None,
                "extra_minutes": round(extra * per_repetition / 60.0, 1) if needed is not None else None,
            }
        )
    return pd.DataFrame(rows), ", ".join(sources)


def looked_at(plan: Plan, needed: int) -> int:
    """The repetitions a run grows to before a claim needing `needed` runs a side is looked at: the first
    look of the plan's schedule at or past it (or `needed` itself, past the schedule's end or for a
    plan that does not grow)."""
    if plan.until_decided is None:
        return needed
    return plan.until_decided.look_from(plan.repetitions, needed) or needed


def run_within_budget(plan: Plan, budget: float | str | None, **kwargs: Any) -> RunResult:
    """`kitlib.run`: the plan's repetitions, then, for a plan made `until_decided` and given a budget
    (the whole run's seconds, or text such as "30m"), repetitions until its claims are decided. The
    result holds every repetition's records, and in `added` what was added and why."""
    started = time.monotonic()
    if budget is not None:  # a plan `kitlib.notebook_plan` fitted already stays as it is, unsaid
        said: list[str] = []
        fitted = fit_to_budget(plan, as_seconds("budget", budget), kwargs.get("results_root"), say=said.append)
        if fitted != plan:
            print(*said)
        plan = fitted
    result = run_plan(plan, **kwargs)
    if budget is None or plan.until_decided is None:
        return result
    left = as_seconds("budget", budget) - (time.monotonic() - started)
    report = extend_until_decided([(plan, result.root)], max(left, 0.0), lambda p: run_plan(p, **kwargs))
    # collects the records of every repetition; measures again only what the run's end judges measured
    # before the machine changed under it (kitlib.measure.run.rejudge)
    final = run_plan(plan, **kwargs)
    final.added = report
    return final
