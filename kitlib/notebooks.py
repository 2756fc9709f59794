"""Executing notebooks with papermill; the executed copy is kept as an artefact of the run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kitlib import paths
from kitlib.experiments.base import Experiment
from kitlib.planning import Plan

#: The Jupyter kernel every notebook of the kit names: the kit's own environment, so kitlib imports.
KERNEL_NAME = "kitlib"
KERNEL_DISPLAY_NAME = "Python (kitlib)"


def ensure_kernel() -> str:
    """Install the `kitlib` kernelspec for this Python when Jupyter does not know it yet (`make python`
    installs it; a plain `pip install` does not)."""
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL_NAME not in KernelSpecManager().find_kernel_specs():
        from ipykernel import kernelspec

        try:
            kernelspec.install(kernel_name=KERNEL_NAME, display_name=KERNEL_DISPLAY_NAME, prefix=sys.prefix)
        except OSError:  # a Python whose prefix is not writable: the user's Jupyter folder then
            kernelspec.install(kernel_name=KERNEL_NAME, display_name=KERNEL_DISPLAY_NAME, user=True)
    return KERNEL_NAME


def execute(notebook: Path, output: Path, parameters: dict[str, Any], *, progress: bool = False) -> Path:
    """Run a notebook in the `kitlib` kernel from the project root; `progress` shows papermill's bar of cells."""
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(
        str(notebook),
        str(output),
        parameters=parameters,
        cwd=str(paths.PROJECT_ROOT),
        progress_bar=progress,
        log_output=False,
        kernel_name=ensure_kernel(),
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
    """Run the experiment's notebook; the terminal sees points done / total and the time left meanwhile."""
    from kitlib.progress import Watcher, planned_units

    notebook = paths.notebooks_root() / experiment.notebook
    root = paths.results_root() / plan.experiment / plan.run_id
    output = root / notebook.name
    with Watcher(f"{plan.experiment} ({plan.profile})", root / "units", planned_units(plan)):
        return execute(notebook, output, experiment_parameters(plan, overrides))
