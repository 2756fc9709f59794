"""A student's own copy of the tour (`kit tour start DIR`): the chapters are copied into a folder of the
student's, so what they type and what Jupyter autosaves stays there and the project's tracked notebooks
stay clean (a later `git pull` never meets a student's answers). The folder is marked, and `check` keeps
each chapter's answers in it (`answers.json`) for the student and a teacher to read."""

from __future__ import annotations

import getpass
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kitlib.core import paths

MARKER = ".kit-tour.json"
ANSWERS = "answers.json"
DEFAULT_FOLDER = "my-tour"


def chapters() -> list[Path]:
    """The project's tour chapters, in order."""
    return sorted((paths.notebooks_root() / "tour").glob("[0-9][0-9]-*.ipynb"))


def tracked_folder() -> Path:
    return paths.notebooks_root() / "tour"


@dataclass(frozen=True)
class Started:
    folder: Path
    copied: list[Path]
    kept: list[Path]  # chapters already there (a student's work): never overwritten


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(paths.PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def start(folder: str | Path | None = None) -> Started:
    """Copy the chapters into `folder` (default: my-tour/ in the current directory), keeping any chapter
    already there, and mark the folder as a student's tour. The project's own tour folder is refused."""
    target = Path(folder if folder is not None else DEFAULT_FOLDER).expanduser().resolve()
    if target == tracked_folder().resolve():
        raise ValueError(f"{target} is the project's tracked tour: name a folder of your own")
    target.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for chapter in chapters():
        destination = target / chapter.name
        if destination.exists():
            kept.append(destination)
        else:
            shutil.copyfile(chapter, destination)
            copied.append(destination)
    marker = target / MARKER
    if not marker.exists():
        facts = {
            "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "student": getpass.getuser(),
            "project": str(paths.PROJECT_ROOT),
            "commit": _commit(),
            "chapters": [c.name for c in chapters()],
        }
        marker.write_text(json.dumps(facts, indent=2) + "\n")
    return Started(target, copied, kept)


def is_student_folder(folder: str | Path) -> bool:
    return (Path(folder) / MARKER).is_file()


def keep_answers(chapter: str, answers: dict[str, object], folder: str | Path | None = None) -> Path | None:
    """Write the chapter's answers into the student's folder's answers.json (a folder `kit tour start` made;
    default: the current directory, where Jupyter runs a notebook's kernel). Elsewhere nothing is written."""
    folder = Path.cwd() if folder is None else Path(folder)
    if not is_student_folder(folder):
        return None
    path = folder / ANSWERS
    kept = json.loads(path.read_text()) if path.is_file() else {}
    kept[chapter] = {str(name): _plain(value) for name, value in answers.items()}
    path.write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n")
    return path


def _plain(value: object) -> object:
    """A value JSON can hold (numpy numbers become Python numbers)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)


def where_note(folder: str | Path | None = None) -> str | None:
    """A note for a chapter opened in the project's tracked copy: answers typed there would be autosaved
    into the repository's notebooks."""
    folder = Path.cwd() if folder is None else Path(folder)
    if folder.resolve() != tracked_folder().resolve():
        return None
    return (
        "This is the project's own copy of the tour: answers typed here would be saved into its tracked "
        "notebooks. Make your own copy first: `kit tour start` (a folder my-tour/), then open the chapters there."
    )


def opening_hint(folder: Path) -> str:
    """How to open the copied chapters: `make lab` serves the project root, so a folder inside it is one click
    away; a folder elsewhere needs a Jupyter of its own started there (the kernel `Python (kitlib)` is found
    either way)."""
    try:
        inside = folder.resolve().relative_to(paths.PROJECT_ROOT.resolve())
    except ValueError:
        jupyter = Path(sys.prefix) / "bin" / "jupyter"
        return f"your tour: {folder}\nopen it with: {jupyter} lab --ServerApp.root_dir={folder}"
    return f"your tour: {folder}\nopen it with `make lab` (from {paths.PROJECT_ROOT}) and browse to {inside}/"
