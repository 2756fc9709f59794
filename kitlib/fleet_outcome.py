"""What became of each host's part of a fleet run, whichever backend ran it, and how it is told."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


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
