"""`make reproduce`: every experiment's profile on every environment this host offers, then the analysis.

KVM joins when it really works here; software emulation (`qemu-tcg`) is never included unasked,
because it measures an emulator, not a hypervisor.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

from kitlib import estimate, experiments, paths, provenance, timing
from kitlib.environments import availability
from kitlib.notebooks import execute, execute_experiment
from kitlib.runner import plan_units
from kitlib.store import RunStore

VM_LABELS_WHEN_KVM = ("kvm", "kvm-tuned")
ANALYSIS_NOTEBOOKS = ("statistics", "figures", "littles-law", "claims")
#: what the quick profile promises on a 2-core machine: every experiment here, then the analysis
PROMISED_MINUTES = {"quick": 30}
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
        from kitlib.vm.prepare import prepare_guest

        _, verdict = prepare_guest()
        print(f"KVM: {'usable' if verdict.usable else 'not usable'}: {verdict.reason}")
    except Exception as exc:  # no Docker, no QEMU: `kit envs` below says which
        print(f"KVM not tested: {str(exc).splitlines()[0][:300]}")


def environments_for(default_envs, offered: dict[str, bool]) -> list[str]:
    chosen = [label for label in default_envs if offered.get(label.split("+")[0])]
    chosen += [label for label in VM_LABELS_WHEN_KVM if offered.get(label) and label not in chosen]
    return chosen


def declared_parameters(notebook) -> set[str]:
    """The parameters a notebook's `parameters` cell declares: only those are handed to it."""
    import papermill

    return set(papermill.inspect_notebook(str(notebook)))


def timing_path():
    return paths.results_root() / "timing.csv"


def reproduce(profile: str = "quick", only: list[str] | None = None) -> int:
    begun = time.monotonic()
    steps: list[timing.StepTime] = []
    _prove_kvm()
    rows = availability()
    offered = {row.label: row.available for row in rows}
    skipped = [f"{row.label} ({row.reason})" for row in rows if not row.available]
    if skipped:
        print("not offered on this host: " + "; ".join(skipped))
    failures = 0
    plans = {}
    for name in only or experiments.names():
        experiment = experiments.get(name)
        envs = environments_for(experiment.envs_for(), offered)
        if not envs:
            print(f"{name}: no environment available, skipped")
            continue
        plans[name] = experiment.plan(environments=envs, profile=profile)
    expected = announce(plans, profile)
    for name, plan in plans.items():
        experiment = experiments.get(name)
        envs = list(plan.environments)
        print(f"{name}: {', '.join(envs)} ({profile}) -> {paths.results_root() / name / plan.run_id}", flush=True)
        since, started = provenance.now(), time.monotonic()
        try:
            execute_experiment(experiment, plan)
        except Exception:  # one failing experiment must not hide the others' results
            failures += 1
            print(f"{name}: FAILED\n{traceback.format_exc(limit=2)}")
        tool_s, units = timing.store_tool_time(paths.results_root() / name / plan.run_id, since)
        steps.append(timing.StepTime(name, time.monotonic() - started, tool_s, units, expected.get(name)))
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


def announce(plans: dict, profile: str) -> dict[str, float]:
    """Print the estimate per experiment (points not yet done) and the total against the profile's
    promise, before anything runs; return the estimates by experiment."""
    speed = estimate.rates()
    expected: dict[str, float] = {}
    print(f"estimated time per experiment on this host ({speed.source}):")
    for name, plan in plans.items():
        store = RunStore(paths.results_root() / name / plan.run_id)
        todo = store.pending(plan_units(plan))
        found = estimate.estimate(plan, todo, calibrated=speed)
        expected[name] = found.total
        print(f"  {name:<14} {estimate.minutes(found.total):>9}  ({len(todo)} points to measure)")
    total = sum(expected.values()) + ANALYSIS_SECONDS
    promise = PROMISED_MINUTES.get(profile)
    line = f"  total about {estimate.minutes(total)} with the analysis"
    if promise is not None:
        verdict = "within" if total <= promise * 60 else "OVER"
        line += f": {verdict} the {profile} profile's promise of {promise} min"
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
