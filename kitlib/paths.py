"""Where the kit reads and writes: the project folders, and a scratch area on a real disk."""

from __future__ import annotations

import os
from pathlib import Path

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
