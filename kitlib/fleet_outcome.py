"""What became of each host's part of a fleet run, whichever backend ran it, and how it is told."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core.errors import KitError

#: a progress bar's line (`12/40 [00:31<…`): no words of what happened
_PROGRESS = re.compile(r"\d+/\d+ \[")


@dataclass
class Outcome:
    """What became of one host's part of the fleet run."""

    host: str
    target: str
    status: str = "pending"  # done | failed
    reason: str = ""
    bundle: Path | None = None
    runs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "target": self.target,
            "status": self.status,
            "reason": self.reason,
            "bundle": str(self.bundle) if self.bundle else None,
            "runs": self.runs,
            "seconds": round(self.seconds, 1),
        }


def summary_lines(outcomes: list[Outcome]) -> list[str]:
    """One line per host for the terminal: done with its bundle, or failed with its reason."""
    lines = []
    for o in outcomes:
        if o.status == "done":
            lines.append(f"  {o.host:<16} done    {o.seconds:6.0f} s  {o.bundle} ({', '.join(o.runs)})")
        else:
            lines.append(f"  {o.host:<16} FAILED  {o.seconds:6.0f} s  {o.reason}")
    return lines


def last_words(text: str, lines: int = 6) -> str:
    """The last lines a host's kit (or its `make`) said, on one line, its progress bars left out."""
    said = [line.strip() for line in text.replace("\r", "\n").splitlines()]
    said = [line for line in said if line and not _PROGRESS.search(line)]
    return " | ".join(said[-lines:])[:600]


def failure_reason(exc: BaseException) -> str:
    """Why a host's part failed, on one line: the kit's own errors and the system's as they read; a
    library's (paramiko's, invoke's: a lost host, whatever the library says) with its type."""
    text = str(exc) if isinstance(exc, (KitError, OSError, EOFError)) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:600]
