"""What a budget would likely decide on this host: each testable claim read on this host's earlier runs,
the look at which more runs would likely decide it, and the fewest minutes for each count of decided
claims (`kit reproduce --dry-run`).

Why: a verdict takes as many runs as this host's noise asks. A teacher planning a lab, or a reader whose
`make reproduce` left most claims inconclusive, needs to know what a longer budget buys before spending it,
and which claims no budget of the schedule decides here. Only results already on disk and the time
models are read: nothing runs.

How it is reckoned, as `make reproduce` would spend a budget: every run first measures its profile's
repetitions; a run may then be planned with its looks cut at any look of its schedule (3, 5, 8, 13, 21),
each of its intervals at 1 − α/K for its K looks (`kitlib.core.sequential`). For each run and each cut,
its claims are read again on the earlier records at that level: a claim decided there counts at the
runs a side it rests on, an inconclusive one at the look its evidence's "about N runs a side" (80% power)
reaches, if the cut reaches it. Growing to that look costs the repetitions past the profile's, of the
environments and workloads those claims compare, by the time models (this host's earlier points where
they exist). One cut per run, chosen together for the fewest minutes at each count of decided claims
(an exact search: a handful of options per run). A forecast from one earlier run's noise: each claim is
decided with about 80% chance at its look, not surely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kitlib.adaptive import forecast_seconds, host_records, verdicts_at_its_level, with_last_look
from kitlib.analyse.claims.core import INCONCLUSIVE, NOT_TESTABLE
from kitlib.measure import estimate
from kitlib.measure.planning import Plan

#: the share of the claims testable here whose minutes the outlook names: the share a quick reproduce
#: on a 2-core machine is held to
GOAL_SHARE = 0.6


@dataclass(frozen=True)
class Need:
    """One testable claim of a run cut at a look: its verdict on the earlier records at that cut's level,
    and the repetitions at which it would likely be decided (None: not within the cut)."""

    claim: str
    now: str
    runs: int | None
    envs: tuple[str, ...]
    workloads: tuple[str, ...]


@dataclass(frozen=True)
class Option:
    """A run planned with `looks` looks and grown as its claims need: seconds past the profile's
    repetitions and the claims likely decided."""

    looks: int
    seconds: float
    claims: tuple[str, ...]


@dataclass
class Outlook:
    """Every run's options, the profile's minutes and, per count of decided claims, the fewest minutes."""

    profile_s: float
    testable: dict[str, str] = field(default_factory=dict)  # claim -> its verdict at 95% on the earlier runs
    options: dict[str, list[Option]] = field(default_factory=dict)
    cheapest: dict[int, tuple[float, dict[str, Option]]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def minutes_for(self, count: int) -> float | None:
        """Minutes of the whole reproduce that likely decide at least `count` claims (None: none here)."""
        found = [seconds for k, (seconds, _) in self.cheapest.items() if k >= count]
        return (self.profile_s + min(found)) / 60.0 if found else None

    def decided_within(self, budget_s: float) -> int:
        """Claims a budget of `budget_s` seconds likely decides."""
        return max((k for k, (seconds, _) in self.cheapest.items() if self.profile_s + seconds <= budget_s), default=0)


def needs_at(plan: Plan, records: pd.DataFrame) -> list[Need]:
    """The plan's testable claims on this host's earlier records, at the level of the plan's looks."""
    verdicts = verdicts_at_its_level(plan, records)
    last = plan.until_decided.max_repetitions if plan.until_decided else plan.repetitions
    found = []
    for _, row in verdicts.iterrows():
        if row["status"] == NOT_TESTABLE:
            continue
        runs = None
        if row["status"] != INCONCLUSIVE:
            runs = max(int(row["n"]), plan.repetitions)
        elif pd.notna(row["needed"]):
            runs = plan.until_decided.look_from(plan.repetitions, int(row["needed"])) if plan.until_decided else None
        envs = tuple(e for e in (row["envs"] or ()) if e in plan.environments) or tuple(plan.environments)
        workloads = tuple(row["workloads"] or ())
        found.append(
            Need(row["claim"], row["status"], runs if runs is not None and runs <= last else None, envs, workloads)
        )
    return found


def options_of(plan: Plan, records: pd.DataFrame, results: Path, speed) -> tuple[list[Option], dict[str, str]]:
    """The run's options, one per cut of its schedule of looks, read on this host's earlier `records`
    (`results` holds their points, whose times the forecast reads), and its testable claims' verdicts at
    95%."""
    assert plan.until_decided is not None
    schedule = plan.until_decided.look_points(plan.repetitions)
    options, testable = [], {}
    for count, last in enumerate(schedule, start=1):
        cut = with_last_look(plan, last) if last != schedule[-1] else plan
        needs = needs_at(cut, records)
        if count == 1:
            testable = {need.claim: need.now for need in needs}
        decided = [need for need in needs if need.runs is not None]
        growing = [need for need in decided if need.runs > plan.repetitions]
        seconds = 0.0
        if growing:
            envs = {e for need in growing for e in need.envs}
            every = any(not need.workloads for need in growing)  # a claim on all the run's workloads
            workloads = None if every else {w for need in growing for w in need.workloads}
            reach = max(need.runs for need in growing)
            one = forecast_seconds(
                plan, speed, envs=sorted(envs), repetition=0, workloads=workloads, history_root=results
            )
            seconds = (reach - plan.repetitions) * one
        options.append(Option(count, seconds, tuple(sorted(need.claim for need in decided))))
    return options, testable


def cheapest(options: dict[str, list[Option]]) -> dict[int, tuple[float, dict[str, Option]]]:
    """For each count of decided claims, the fewest seconds past the profile and the option of each run
    that gives it: one option per run, every combination searched (counts stay below a hundred)."""
    best: dict[int, tuple[float, dict[str, Option]]] = {0: (0.0, {})}
    for name, choices in options.items():
        grown: dict[int, tuple[float, dict[str, Option]]] = {}
        for count, (seconds, picked) in best.items():
            for option in choices:
                key, total = count + len(option.claims), seconds + option.seconds
                if key not in grown or total < grown[key][0]:
                    grown[key] = (total, {**picked, name: option})
        best = grown
    return best


def outlook(plans: dict[str, Plan], results: Path, analysis_s: float = 0.0) -> Outlook:
    """The outlook of these plans (each made `until_decided`) from the earlier runs under `results`."""
    speed = estimate.rates()
    profile_s = sum(forecast_seconds(plan, speed, history_root=results) for plan in plans.values()) + analysis_s
    found = Outlook(profile_s)
    for name, plan in plans.items():
        records = host_records(plan, results) if plan.until_decided is not None else pd.DataFrame()
        if records.empty:
            continue
        found.sources += sorted(set(records["source"]))
        found.options[name], testable = options_of(plan, records, results, speed)
        found.testable.update(testable)
    found.cheapest = cheapest(found.options)
    return found


def frontier(found: Outlook) -> list[tuple[int, float, set[str]]]:
    """The counts of decided claims worth their minutes: each with its minutes of the whole reproduce
    and its claims, every row deciding more than all cheaper ones."""
    rows: list[tuple[int, float, set[str]]] = []
    for count, (seconds, picked) in sorted(found.cheapest.items(), key=lambda item: (item[1][0], -item[0])):
        if rows and count <= rows[-1][0]:
            continue
        claims = {claim for option in picked.values() for claim in option.claims}
        rows.append((count, (found.profile_s + seconds) / 60.0, claims))
    return rows


def describe(found: Outlook, budget_s: float | None = None) -> str:
    """The outlook in words: each count of decided claims with its minutes and the claims it adds."""
    total = len(found.testable)
    if not total:
        return (
            "no earlier run on this host holds a claim the kit can test here: a first `make reproduce` measures "
            "the noise each claim's runs a side are read from"
        )
    lines = [
        f"{total} claims testable here, read on the earlier runs of this host in {len(found.sources)} "
        f"folder{'' if len(found.sources) == 1 else 's'}; "
        "what the budget of a reproduce from the start (the profile, then repetitions) would likely decide, "
        "each claim with about 80% chance at its look:",
        f"  {'decided':<16} {'minutes':>7}",
    ]
    before: set[str] = set()
    for count, minutes, claims in frontier(found):
        share = f"{count} of {total} ({100 * count / total:.0f}%)"
        added = ", ".join(sorted(claims - before)) or "-"
        dropped = sorted(before - claims)
        text = "the profile's repetitions: " + added if not before else f"+ {added}"
        if dropped:
            text += f" (in place of {', '.join(dropped)})"
        lines.append(f"  {share:<16} {minutes:>7.1f}  {text}")
        before = claims
    goal = math.ceil(GOAL_SHARE * total - 1e-9)
    goal_minutes = found.minutes_for(goal)
    reach = f"about {goal_minutes:.0f} min" if goal_minutes is not None else "beyond every schedule of looks here"
    lines.append(f"{GOAL_SHARE:.0%} of them ({goal} claims): {reach}")
    if budget_s is not None:
        lines.append(f"the budget of {budget_s / 60:.0f} min: about {found.decided_within(budget_s)} of {total}")
    never = sorted(set(found.testable) - before)
    if never:
        lines.append(f"not likely decided within any schedule of looks here ({len(never)}): {', '.join(never)}")
    return "\n".join(lines)
