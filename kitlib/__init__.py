"""kitlib: rerun the bare-metal / Docker / KVM comparison (Felter et al. 2014) on your own hardware.

The public API is small: plan an experiment, run it, load the records, analyse them.
"""

from kitlib.core import VERSION as __version__

__all__ = ["__version__", "load_records", "notebook_plan", "plan", "run"]


def plan(experiment: str, plan_file=None, **kwargs):
    """Validate an experiment's parameters and return its Plan (nothing is started). With `plan_file`
    (a plan.json `kit run` wrote) that plan is taken as it is and the other parameters are not used."""
    if plan_file is not None:
        from kitlib.measure.run.plan_file import load_plan

        return load_plan(plan_file, experiment)
    from kitlib.measure import experiments

    return experiments.get(experiment).plan(**kwargs)


def notebook_plan(experiment: str, namespace):
    """The plan of an experiment notebook: its parameters cell's values, taken from the notebook's
    namespace (`globals()`), or the plan of `plan_file` when `kit run` handed one; a plan grown
    `until_decided` within a `budget` has its looks cut where that budget ends."""
    from kitlib.adaptive import notebook_plan as fitted_plan

    return fitted_plan(experiment, namespace)


def run(plan, budget=None, **kwargs):
    """Execute a Plan (resuming what an earlier run of the same plan left undone). A plan made
    `until_decided` is then given repetitions of what its undecided claims need within `budget` (the
    whole run's time: seconds, or text such as "30m"; None: its first repetitions only)."""
    from kitlib.adaptive import run_within_budget

    return run_within_budget(plan, budget, **kwargs)


def load_records(*roots, experiment=None):
    from kitlib.results import load_records as _load

    return _load(*roots, experiment=experiment)
