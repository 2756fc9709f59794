"""Executing notebooks with papermill; the executed copy is kept as an artefact of the run."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kitlib.core import paths, signals
from kitlib.core.procs import pid_alive
from kitlib.measure.experiments.base import Experiment
from kitlib.measure.planning import Plan
from kitlib.measure.store import RunStore
from kitlib.progress import Watcher, planned_units

#: how long a stopped notebook's kernel may take to remove what its run started before it is killed
STOP_GRACE_S = 180.0

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
    """Execute with papermill; a stop (Ctrl-C, SIGTERM, SIGHUP) is passed on to the kernel, which runs
    the experiment and owns what it started, and waited for while the kernel removes it.

    papermill runs in a worker thread so that its client cannot take this process's signal handlers:
    the main thread keeps the kit's, and on a stop it signals the kernel itself (the kernel handles
    SIGTERM like Ctrl-C while a run is in progress), waits up to STOP_GRACE_S for the run inside to
    unwind, and only then kills it."""
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    outcome: dict[str, BaseException] = {}
    finished = threading.Event()  # not Thread.join: a join cut by a signal can mark a live thread stopped

    def work() -> None:
        try:
            papermill.execute_notebook(
                str(notebook),
                str(output),
                parameters=parameters,
                cwd=str(paths.PROJECT_ROOT),
                progress_bar=progress,
                log_output=False,
                kernel_name=ensure_kernel(),
                # the kernel's own start-up log (e.g. "running over TCP without encryption" on loopback)
                # tells a kit user nothing; its errors still reach the terminal
                extra_arguments=["--IPKernelApp.log_level=ERROR"],
            )
        except BaseException as exc:  # handed to the main thread
            outcome["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="papermill", daemon=True)
    with signals.stop_on_signals():
        worker.start()
        try:
            while not finished.wait(timeout=0.5):
                pass
        except KeyboardInterrupt:
            _stop_kernels(finished)
            raise
    if "error" in outcome:
        raise outcome["error"]
    return output


def _kernel_processes() -> list[int]:
    """Jupyter kernels this process started (papermill's jupyter_client launches them as children)."""
    me = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if parent == me and b"ipykernel" in command:
            found.append(int(entry.name))
    return found


def _stop_kernels(finished: threading.Event) -> None:
    """SIGTERM the kernels (a run inside unwinds as on Ctrl-C), wait for papermill to end, then SIGKILL
    whatever kernel is still there."""
    kernels = _kernel_processes()
    for pid in kernels:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while not finished.is_set() and any(pid_alive(pid) for pid in kernels) and time.monotonic() < deadline:
        finished.wait(timeout=0.5)
    for pid in kernels:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    finished.wait(timeout=30)


def experiment_parameters(plan_file: Path) -> dict[str, Any]:
    """The notebook's parameters for a validated plan: the plan itself (one file, so nothing is built
    twice) and where results and figures go."""
    return {
        "plan_file": str(plan_file),
        "results_dir": str(paths.results_root()),
        "figures_dir": str(paths.figures_root()),
    }


def execute_experiment(experiment: Experiment, plan: Plan) -> Path:
    """Run the experiment's notebook on the validated plan, written first to the run's folder (a folder
    of another plan is refused there, before the notebook starts); the terminal sees points done / total
    and the time left meanwhile."""

    notebook = paths.notebooks_root() / experiment.notebook
    store = RunStore(paths.run_folder(plan))
    store.write_plan(plan.model_dump(mode="json"))
    output = store.root / notebook.name
    with Watcher(f"{plan.experiment} ({plan.profile})", store.root / "units", planned_units(plan)):
        return execute(notebook, output, experiment_parameters(store.root / "plan.json"))
