"""Executing notebooks with papermill; the executed copy is kept as an artefact of the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kitlib import paths
from kitlib.experiments.base import Experiment
from kitlib.planning import Plan


def execute(notebook: Path, output: Path, parameters: dict[str, Any], *, progress: bool = False) -> Path:
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(notebook),
        str(output),
        parameters=parameters,
        cwd=str(paths.PROJECT_ROOT),
        progress_bar=progress,
        log_output=False,
        kernel_name="python3",
    )
    return output


def experiment_parameters(plan: Plan, overrides: dict[str, Any]) -> dict[str, Any]:
    """The notebook's parameters for a plan: its fixed ones plus the overrides the user gave."""
    preset = {"preset": plan.preset} if plan.preset else {}  # only notebooks of experiments with presets take it
    return {
        **preset,
        "environments": list(plan.environments),
        "profile": plan.profile,
        "repetitions": plan.repetitions,
        "peer": plan.peer,
        "peer_host": plan.peer_host,
        "sut_address": plan.sut_address,
        "sut_host": plan.sut_host,
        "ssh_key": plan.ssh_key,
        "known_hosts": plan.known_hosts,
        "results_dir": str(paths.results_root()),
        "figures_dir": str(paths.figures_root()),
        **overrides,
    }


def execute_experiment(experiment: Experiment, plan: Plan, overrides: dict[str, Any]) -> Path:
    notebook = paths.notebooks_root() / experiment.notebook
    output = paths.results_root() / plan.experiment / plan.run_id / notebook.name
    return execute(notebook, output, experiment_parameters(plan, overrides))
