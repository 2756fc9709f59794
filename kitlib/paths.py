"""Where the kit reads and writes: the project folders, and a scratch area on a real disk."""

from __future__ import annotations

import os
from pathlib import Path

from kitlib.errors import KitError

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def results_root() -> Path:
    return Path(os.environ.get("KIT_RESULTS", PROJECT_ROOT / "results"))


def figures_root() -> Path:
    return Path(os.environ.get("KIT_FIGURES", PROJECT_ROOT / "figures"))


def notebooks_root() -> Path:
    return PROJECT_ROOT / "notebooks"


def scratch_root() -> Path:
    """Scratch space for native data directories: /var/tmp, which is on disk where /tmp may be tmpfs."""
    return Path(os.environ.get("KIT_SCRATCH", "/var/tmp/kitlib"))


def cache_root() -> Path:
    return Path(os.environ.get("KIT_CACHE", Path.home() / ".cache" / "kitlib"))


def resolve_results_dirs(results_dirs) -> list[Path]:
    """The folders an analysis reads, relative ones taken against the project root (a kernel started by
    JupyterLab runs in the notebook's folder, where `data/sample` would silently match nothing).

    No folder given means results/. A folder that does not exist or holds no records is an error naming
    it, never an analysis of zero records.
    """

    given = [str(p) for p in results_dirs] if results_dirs else []
    folders = [_from_root(p) for p in given] or [results_root()]
    for folder, name in zip(folders, given or [str(folders[0])], strict=True):
        if not folder.is_dir():
            raise KitError(f"results_dirs: {name!r} is not a folder (looked for {folder})")
        if not any(folder.glob("*/*/records.csv")):
            hint = " (run an experiment first, or point results_dirs at data/sample)" if not given else ""
            raise KitError(f"results_dirs: {name!r} holds no records ({folder}/<experiment>/<run>/records.csv){hint}")
    return folders


def _from_root(path: str | Path) -> Path:
    path = Path(path).expanduser()
    return path if path.is_absolute() else PROJECT_ROOT / path


def summary_target(summary_path, results_dirs) -> Path | None:
    """Where the claims' summary goes: the path asked for; else results/summary.md, but only when the
    records are results/ itself (a look at data/sample must not replace the verdict on this host's runs).
    None: write no summary."""
    if summary_path:
        return _from_root(summary_path)
    folders = resolve_results_dirs(results_dirs)
    if [f.resolve() for f in folders] == [results_root().resolve()]:
        return results_root() / "summary.md"
    return None
