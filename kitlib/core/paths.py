"""Where the kit reads and writes: the project folders, and a scratch area on a real disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from kitlib.core import (
    owned_files,
    parameters,
)  # each reads the other only when called: parameters.as_path uses from_root
from kitlib.core.errors import KitError

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def results_root() -> Path:
    return Path(os.environ.get("KIT_RESULTS", PROJECT_ROOT / "results"))


class NamesItsRun(Protocol):
    """What names a run's folder: a plan (`kitlib.measure.planning.Plan`)."""

    @property
    def experiment(self) -> str: ...

    @property
    def run_id(self) -> str: ...


def run_folder(plan: NamesItsRun, results: Path | None = None) -> Path:
    """Where a plan's records, units and provenance live: <results>/<experiment>/<run_id> (the one place
    that spells it: the CLI, the runner, the notebooks and `kit reproduce` all ask here)."""
    return Path(results or results_root()) / plan.experiment / plan.run_id


def figures_root() -> Path:
    return Path(os.environ.get("KIT_FIGURES", PROJECT_ROOT / "figures"))


def notebooks_root() -> Path:
    return PROJECT_ROOT / "notebooks"


def scratch_root() -> Path:
    """Scratch space for native data directories: /var/tmp, which is on disk where /tmp may be tmpfs."""
    return Path(os.environ.get("KIT_SCRATCH", "/var/tmp/kitlib"))


def own_scratch_root() -> Path:
    """`scratch_root`, made 0700 where missing and refused where another user owns it or others may
    write it: /var/tmp is everyone's, so a folder of that name made first by another user could
    hand them the kit's data directories."""
    return owned_files.private_dir(scratch_root())


def cache_root() -> Path:
    return Path(os.environ.get("KIT_CACHE", Path.home() / ".cache" / "kitlib"))


#: where records.csv lies under each folder an analysis reads, the deepest level first: a run's
#: folder, an experiment's folder of runs, the results folder of experiments
RECORD_LEVELS = (
    ("a run's folder", "records.csv", "records.csv"),
    ("an experiment's folder", "*/records.csv", "<run>/records.csv"),
    ("a results folder", "*/*/records.csv", "<experiment>/<run>/records.csv"),
)


def records_files(folder: Path, experiment: str | None = None) -> list[Path]:
    """The records.csv files of a folder at whichever level it is (see RECORD_LEVELS), only those of
    `experiment`'s runs where one is named: a folder is read at one level, so a run is never counted
    twice and its own subfolders are never taken for runs."""
    for _, pattern, _ in RECORD_LEVELS:
        found = sorted(folder.glob(pattern))
        if found:
            return [f for f in found if experiment is None or f.resolve().parent.parent.name == experiment]
    return []


def resolve_results_dirs(results_dirs, parameter: str = "results_dirs") -> list[Path]:
    """The folders an analysis reads, relative ones taken against the project root (a kernel started by
    JupyterLab runs in the notebook's folder, where `data/sample` would silently match nothing). Each may
    be the results folder, one experiment's folder or one run's; `results_dirs` in any form
    `kitlib.core.parameters.as_list` reads (a list, one folder, the JSON text `papermill -p` passes).

    No folder given means results/. A folder that does not exist or holds no records is an error naming
    it (as `parameter`), never an analysis of zero records.
    """
    given = parameters.as_list(parameter, results_dirs)
    folders = [from_root(p) for p in given] or [results_root()]
    for folder, name in zip(folders, given or [str(folders[0])], strict=True):
        if not folder.is_dir():
            raise KitError(f"{parameter}: {name!r} is not a folder (looked for {folder})")
        if not records_files(folder):
            hint = f" (run an experiment first, or point {parameter} at data/sample)" if not given else ""
            levels = ", ".join(f"{what} ({shown})" for what, _, shown in RECORD_LEVELS)
            raise KitError(f"{parameter}: {name!r} holds no records ({folder}); it is none of: {levels}{hint}")
    return folders


def from_root(path: str | Path) -> Path:
    """A path as given, `~` expanded, a relative one taken against the project root."""
    path = Path(path).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def summary_target(summary_path, results_dirs) -> Path | None:
    """Where the claims' summary goes: the path asked for; else results/summary.md, but only when the
    records are results/ itself (a look at data/sample must not replace the verdict on this host's runs).
    None: write no summary."""
    summary_path = parameters.as_text("summary_path", summary_path)
    if summary_path:
        return from_root(summary_path)
    folders = resolve_results_dirs(results_dirs)
    if [f.resolve() for f in folders] == [results_root().resolve()]:
        return results_root() / "summary.md"
    return None
