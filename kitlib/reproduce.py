"""`make reproduce`: every experiment's profile on every environment this host offers, then the analysis.

KVM joins when it really works here, and so do the isolation mechanisms this host offers beyond
Docker's default (other OCI runtimes, Podman rootful and rootless, systemd-nspawn) for the
experiments that compare them; software emulation (`qemu-tcg`) is never included unasked,
because it measures an emulator, not a hypervisor. Every run is planned `--until-decided`: after the
profile's repetitions of every experiment, the time left in the budget goes to repetitions of what
undecided claims need (`kitlib.adaptive`), the intervals kept valid over those looks
(`kitlib.core.sequential`), each run's looks ending where the forecast says its share of the budget
ends; `--fixed` runs the profile's repetitions only, at 95%.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

from kitlib import outlook, results, specs
from kitlib.adaptive import (
    begun,
    compared_environments,
    extend_until_decided,
    forecast_seconds,
    looks_text,
    looks_within,
    share_budget,
)
from kitlib.analyse import claims, design_spread, replicas
from kitlib.core import paths, timing
from kitlib.measure import estimate, experiments, provenance
from kitlib.measure.environments import availability
from kitlib.measure.run.runner import likely_search_units, plan_units, run_plan
from kitlib.measure.store import RunStore
from kitlib.notebooks import execute, execute_experiment

VM_LABELS_WHEN_KVM = ("kvm", "kvm-tuned")
#: one label per isolation mechanism, measured where `kit envs` says it runs here: the runtimes and
#: sandboxes compared since 2014, on the workloads that tell them apart (syscalls, network, I/O, start)
ISOLATION_LABELS = (
    "docker-host-volume+runtime=crun",
    "docker-host-volume+runtime=runsc",
    "docker-host-volume+runtime=runsc-hostinet",
    "podman-host-volume",
    "podman-nat-volume",
    "podman-rootless-nat-volume+slirp4netns",
    "podman-rootless-nat-volume+pasta",
    "nspawn",
)
#: where `make reproduce` adds them: Redis (system calls and the network path under load) and start-up;
#: `net` and `block` on them would add some 25 minutes more to a 45-minute promise, so those run when
#: asked (`kit run net --env …`, as `data/isolation-sample` was made). No claim compares them, so a
#: reproduce surveys them (`Plan.survey`): the sweep's middle point only, beside the full sweep of the
#: labels the claims compare
ISOLATION_EXPERIMENTS = ("redis", "startup")
ANALYSIS_NOTEBOOKS = ("statistics", "figures", "littles-law", "claims")
#: what the quick profile promises on a 2-core machine: every experiment here, repetitions added until
#: the claims are decided, then the analysis (the profile's repetitions alone take about half of it)
PROMISED_MINUTES = {"quick": 45}
#: the analysis notebooks' share of a reproduce, before they have run here
ANALYSIS_SECONDS = 120.0


def summary_path():
    return paths.results_root() / "summary.md"


def _prove_kvm() -> None:
    """Where /dev/kvm exists, build the guest and boot it under KVM once, so that the VM labels
    are offered only when KVM really works (the verdict is cached)."""
    if not os.path.exists("/dev/kvm"):
        return
    try:
        from kitlib.measure.vm.prepare import prepare_guest

        _, verdict = prepare_guest()
        print(f"KVM: {'usable' if verdict.usable else 'not usable'}: {verdict.reason}")
    except Exception as exc:  # no Docker, no QEMU: `kit envs` below says which
        print(f"KVM not tested: {str(exc).splitlines()[0][:300]}")


def environments_for(default_envs, offered: dict[str, bool], experiment: str | None = None) -> list[str]:
    """An experiment's default labels this host offers, KVM's where it works, and the isolation labels
    offered here (`offered`: `kit envs`' rows, a label with its options where it lists one so)."""
    chosen = [label for label in default_envs if offered.get(label, offered.get(label.split("+")[0]))]
    chosen += [label for label in VM_LABELS_WHEN_KVM if offered.get(label) and label not in chosen]
    if experiment in ISOLATION_EXPERIMENTS:
        chosen += [label for label in ISOLATION_LABELS if offered.get(label) and label not in chosen]
    return chosen


def plan_of(name: str, offered: dict[str, bool], profile: str, adaptive: bool):
    """The reproduce's plan of one experiment on what this host offers (None where it offers none): the
    isolation labels surveyed at the sweep's middle point, since no claim compares them, and so is every
    label of an experiment whose claims all name a platform the kit never runs (the web tier's: vSphere),
    whose runs can serve its figures but never a verdict."""
    experiment = experiments.get(name)
    envs = environments_for(experiment.envs_for(), offered, name)
    if not envs:
        return None
    surveyed = [label for label in envs if label in ISOLATION_LABELS]
    if not claims.testable_by_the_kit(name):
        surveyed = envs
    order, why = design_for(name)
    print(f"{name}: {order} design ({why})", flush=True)
    return experiment.plan(
        environments=envs, profile=profile, until_decided={} if adaptive else None, survey=surveyed, order=order
    )


def design_for(name: str) -> tuple[str, str]:
    """The design of an experiment's run, and why: duets where every workload declares how it runs on half
    the machine (`WorkloadSchema.duet`) and this host has two CPUs at least, unless this host's own earlier
    A/A duets of the experiment found the original and its replica different (the design's floor fails
    here) or measured any of its workloads' ratio wider than its runs one at a time did
    (`design_spread`); else interleaved."""
    schema = specs.schema(name)
    lacking = [w for w, declared in schema.workloads.items() if declared.duet is None]
    if lacking or not schema.workloads:
        return "interleaved", f"{', '.join(lacking) or 'its workloads'}: not measured in duets"
    if len(os.sched_getaffinity(0)) < 2:
        return "interleaved", "one CPU: no two halves for a duet"
    earlier = _this_host_records(name)
    failed = replicas.failed_duet_floor(earlier)
    if failed:
        return "interleaved", f"this host's A/A duets found a difference: {'; '.join(failed)}"
    wider = design_spread.duet_loses(earlier)
    if wider:
        return "interleaved", f"on this host's earlier runs duets measured wider: {'; '.join(wider)}"
    return "duet", "both sides at once on half the CPUs each, an A/A duet beside them"


def _this_host_records(experiment: str):
    """This host's earlier records of an experiment in the results folder (none: an empty frame)."""
    folder = paths.results_root() / experiment
    found = results.load_records(folder) if folder.is_dir() else None
    if found is None or found.empty or "host" not in found.columns:
        return found if found is not None else results.load_records()
    return found[found["host"] == provenance.this_host_id()]


def declared_parameters(notebook) -> set[str]:
    """The parameters a notebook's `parameters` cell declares: only those are handed to it."""
    import papermill

    return set(papermill.inspect_notebook(str(notebook)))


def promised_seconds(profile: str) -> float | None:
    """The budget a profile promises (the quick profile's 45 minutes), None where it promises none."""
    return PROMISED_MINUTES[profile] * 60.0 if profile in PROMISED_MINUTES else None


def timing_path():
    return paths.results_root() / "timing.csv"


def reproduce(
    profile: str = "quick", only: list[str] | None = None, budget_s: float | None = None, adaptive: bool = True
) -> int:
    """Run, decide, analyse; `budget_s` bounds the whole (default: the profile's promise, else none)."""
    begun = time.monotonic()
    budget_s = budget_s if budget_s is not None else promised_seconds(profile)
    steps: list[timing.StepTime] = []
    _prove_kvm()
    plans = offered_plans(profile, only, adaptive)
    failures = 0
    if adaptive and budget_s is not None:
        plans = looks_the_budget_affords(plans, budget_s)
    expected = announce(plans, profile, budget_s)  # the cut plans: a run begun before is found as it was
    for name, plan in plans.items():
        experiment = experiments.of(plan)
        envs = list(plan.environments)
        print(f"{name}: {', '.join(envs)} ({profile}) -> {paths.run_folder(plan)}", flush=True)
        since, started = provenance.now(), time.monotonic()
        try:
            execute_experiment(experiment, plan)
        except Exception:  # one failing experiment must not hide the others' results
            failures += 1
            print(f"{name}: FAILED\n{traceback.format_exc(limit=2)}")
        tool_s, units = timing.store_tool_time(paths.run_folder(plan), since)
        parts = timing.store_parts(paths.run_folder(plan), since)
        steps.append(timing.StepTime(name, time.monotonic() - started, tool_s, units, expected.get(name), parts))
    if adaptive:
        steps.append(until_decided(plans, budget_s, begun))
    for name in ANALYSIS_NOTEBOOKS:
        notebook = paths.notebooks_root() / "analysis" / f"{name}.ipynb"
        if not notebook.exists():
            continue
        output = paths.results_root() / "analysis" / f"{name}.ipynb"
        offered = {
            "results_dirs": [str(paths.results_root())],
            "figures_dir": str(paths.figures_root()),
            "summary_path": str(summary_path()),
            "interactive": False,
        }
        parameters = {k: v for k, v in offered.items() if k in declared_parameters(notebook)}
        print(f"analysis: {name} ...", flush=True)
        started = time.monotonic()
        try:
            execute(notebook, output, parameters, progress=sys.stderr.isatty())  # a bar of cells on a terminal
            print(f"analysis: {name} -> {output} ({time.monotonic() - started:.0f} s)")
        except Exception:
            failures += 1
            print(f"analysis {name}: FAILED\n{traceback.format_exc(limit=2)}")
        steps.append(timing.StepTime(f"analysis: {name}", time.monotonic() - started))
    summary = summary_path()
    if summary.exists():
        print(f"\nsummary of the claims: {summary}")
        print("\n".join(line for line in summary.read_text().splitlines() if line.startswith("**")))
    report_time(steps, time.monotonic() - begun, summary)
    return 1 if failures else 0


def offered_plans(profile: str, only: list[str] | None, adaptive: bool) -> dict:
    """A plan per experiment on the environments this host offers (said when some are not)."""
    rows = availability()
    offered = {row.label: row.available for row in rows}
    skipped = [f"{row.label} ({row.reason})" for row in rows if not row.available]
    if skipped:
        print("not offered on this host: " + "; ".join(skipped))
    plans = {}
    for name in only or specs.names():
        plan = plan_of(name, offered, profile, adaptive)
        if plan is None:
            print(f"{name}: no environment available, skipped")
            continue
        plans[name] = plan
    return plans


def reproduce_outlook(profile: str = "quick", only: list[str] | None = None, budget_s: float | None = None) -> int:
    """`kit reproduce --dry-run`: the estimated time, and what budgets would likely decide, read from this
    host's earlier runs (`kitlib.outlook`); nothing is measured or written."""
    budget_s = budget_s if budget_s is not None else promised_seconds(profile)
    plans = offered_plans(profile, only, adaptive=True)
    announce(looks_the_budget_affords(plans, budget_s) if budget_s is not None else plans, profile, budget_s)
    # every cut of every run's looks is weighed, so the outlook reads the uncut plans
    print(outlook.describe(outlook.outlook(plans, paths.results_root(), ANALYSIS_SECONDS), budget_s))
    return 0


def until_decided(plans: dict, budget_s: float | None, begun: float) -> timing.StepTime:
    """Repetitions of what undecided claims need, in the time the budget leaves before the analysis."""
    left = (budget_s or 0.0) - (time.monotonic() - begun) - ANALYSIS_SECONDS
    print(f"until decided: {max(left, 0) / 60:.1f} min left for repetitions of what undecided claims need", flush=True)
    started, since = time.monotonic(), provenance.now()
    runs = [(plan, paths.run_folder(plan)) for plan in plans.values() if _may_grow(plan)]
    if not runs:
        print("  every run was planned with a single look (the profile fills the budget): none grows")
    report = extend_until_decided(runs, max(left, 0.0), lambda plan: run_plan(plan, progress=sys.stderr.isatty()))
    for note in report.notes:
        print(f"  not within reach: {note}")
    tool_s = units = 0
    parts = timing.Parts()
    for _, root in runs:
        found_s, found_units = timing.store_tool_time(root, since)
        tool_s, units = tool_s + found_s, units + found_units
        parts += timing.store_parts(root, since)
    return timing.StepTime(
        f"until decided ({len(report.added)} repetitions)", time.monotonic() - started, tool_s, units, None, parts
    )


def looks_the_budget_affords(plans: dict, budget_s: float) -> dict:
    """Each run's looks cut at the last one its share of the budget could reach (`adaptive.looks_within`),
    from the forecast of the whole profile (every point, done or not, so that a resumed reproduce plans
    alike) and of one repetition of the environments its claims compare (`adaptive.compared_environments`:
    not the isolation labels it surveys); the time left after the profile shared out so that the looks
    planned together fit in it (`adaptive.share_budget`), none to a run no claim of which the kit can
    test. Printed, since the looks set every interval's level."""
    speed = estimate.rates()
    left = budget_s - sum(forecast_seconds(plan, speed) for plan in plans.values()) - ANALYSIS_SECONDS
    if left > 0:
        print(
            f"looks of each run, for the {estimate.minutes(left)} the budget leaves after the profile (each run's "
            "next look in turn, the cheapest first, while the looks planned together fit):"
        )
    else:
        print("looks of each run: the profile alone fills the budget, so a run not begun is looked at once, at 95%:")
    schedules, repetition_s = {}, {}
    for name, plan in plans.items():
        repetition_s[name] = forecast_seconds(plan, speed, envs=compared_environments(plan), repetition=0)
        if plan.until_decided is not None and claims.testable_by_the_kit(name):
            schedules[name] = (plan.until_decided.look_points(plan.repetitions), repetition_s[name])
    shares = share_budget(schedules, left)
    fitted = {}
    for name, plan in plans.items():
        fitted[name] = looks_within(plan, shares.get(name, 0.0), repetition_s[name], begun)
        print(f"  {name:<14} {looks_text(fitted[name])}")
    return fitted


def _may_grow(plan) -> bool:
    """Whether the plan's schedule has a look beyond its first repetitions."""
    return plan.until_decided is not None and plan.until_decided.looks(plan.repetitions) > 1


def announce(plans: dict, profile: str, budget_s: float | None = None) -> dict[str, float]:
    """Print the estimate per experiment (points not yet done) and the total against the profile's
    promise, before anything runs; return the estimates by experiment."""
    speed = estimate.rates()
    expected: dict[str, float] = {}
    print(f"estimated time per experiment on this host ({speed.source}):")
    for name, plan in plans.items():
        store = RunStore(paths.run_folder(plan))
        units = plan_units(plan, extensions=store.extensions())
        searched = likely_search_units(plan, units)
        todo = store.pending(units) + searched
        found = estimate.estimate(plan, todo, calibrated=speed)
        expected[name] = found.total
        more = f", {len(searched)} of them a search's likely ones" if searched else ""
        print(f"  {name:<14} {estimate.minutes(found.total):>9}  ({len(todo)} points to measure{more})")
    total = sum(expected.values()) + ANALYSIS_SECONDS
    line = f"  total about {estimate.minutes(total)} with the analysis"
    if budget_s is not None:
        verdict = "within" if total <= budget_s else "OVER"
        line += f": {verdict} the budget of {budget_s / 60:.0f} min"
        if any(plan.until_decided is not None for plan in plans.values()) and total < budget_s:
            line += f"; the {estimate.minutes(budget_s - total)} left go to repetitions of undecided claims"
    print(line, flush=True)
    return expected


def report_time(steps: list[timing.StepTime], wall_s: float, summary) -> None:
    """Print where the time went and keep it: timing.csv beside the results, and a section of the summary."""
    other = wall_s - sum(s.wall_s for s in steps)
    if other > 0:  # the KVM check and `kit envs` before the first experiment
        steps = [*steps, timing.StepTime("set-up (environments offered)", other)]
    text = f"## Where the time went ({wall_s / 60:.1f} min)\n\n{timing.table(steps)}\n"
    path = timing.write_csv(steps, timing_path())
    print(f"\n{text}\n(also in {path})")
    if summary.exists():
        summary.write_text(summary.read_text().rstrip("\n") + "\n\n" + text)
