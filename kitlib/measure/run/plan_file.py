"""A plan read from a file (`plan_file`, the plan.json `kit run` hands its notebook), validated whole:
its shape, its fields, the experiment's parameters and its size, before anything is written or started."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from kitlib import specs
from kitlib.core.errors import PlanError
from kitlib.measure import experiments
from kitlib.measure.planning import Plan, explain


def load_plan(path: str | Path, experiment: str | None = None) -> Plan:
    """A validated plan from a `plan.json` (the store's document, or a bare plan): what `kit run` hands
    its notebook, so the plan is built once and the notebook runs exactly what was validated."""
    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PlanError(f"plan_file: cannot read a plan from {path}: {exc}") from None
    if isinstance(document, dict) and isinstance(document.get("plan"), dict):
        document = document["plan"]  # the store's plan.json holds the plan under "plan"
    if not isinstance(document, dict):
        raise PlanError(
            f"plan_file: {path} holds a JSON {type(document).__name__}, not a plan (an object with experiment, "
            "environments, profile, repetitions and params, as `kit run` writes it)"
        )
    if experiment is not None and document.get("experiment") != experiment:
        raise PlanError(f"plan_file: {path} is a plan of {document.get('experiment')!r}, not of {experiment!r}")
    try:
        plan = Plan.model_validate(document)
    except ValidationError as error:
        known = document.get("experiment") in specs.names()
        raise explain(
            error, f"plan_file {path}", specs.get(document["experiment"]).params_model if known else None
        ) from None
    experiments.of(plan).check(plan, f"plan_file {path}")
    return plan
