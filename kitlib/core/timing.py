"""Where a reproduce spends its time: per experiment, the wall time split into tool time (the units'
benchmark commands, as the store records them) and harness time (the rest: set-up, image, environments
started and stopped, notebooks).

Tool time of a unit is its `tool_seconds` (the summed run time of the commands it ran, at most its wall
time); a store written before that field existed gives the unit's `seconds` (its whole measure call).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

FIELDS = ("step", "wall_s", "tool_s", "harness_s", "harness_over_tool", "units", "estimated_s")


@dataclass(frozen=True)
class StepTime:
    """One line of the table: an experiment's run, or an analysis notebook (no tool time)."""

    step: str
    wall_s: float
    tool_s: float = 0.0
    units: int = 0
    #: what the estimate said before the step ran (None: no estimate)
    estimated_s: float | None = None

    @property
    def harness_s(self) -> float:
        return max(0.0, self.wall_s - self.tool_s)

    @property
    def harness_over_tool(self) -> float | None:
        return self.harness_s / self.tool_s if self.tool_s > 0 else None


def unit_tool_seconds(unit: dict) -> float:
    value = unit.get("tool_seconds", unit.get("seconds"))
    return float(value or 0.0)


def store_tool_time(run_root: Path, since: str | None = None) -> tuple[float, int]:
    """Summed tool time and count of the run's done units that finished at or after `since` (an ISO
    time as the store writes it; None = all), so a resumed run counts only this session's units."""
    total, count = 0.0, 0
    for path in sorted((Path(run_root) / "units").glob("*.json")):
        unit = json.loads(path.read_text())
        if unit.get("status") != "ok":
            continue
        if since is not None and str(unit.get("finished", "")) < since:
            continue
        total += unit_tool_seconds(unit)
        count += 1
    return total, count


def totals(steps: list[StepTime]) -> StepTime:
    estimated = [s.estimated_s for s in steps if s.estimated_s is not None]
    return StepTime(
        "total",
        sum(s.wall_s for s in steps),
        sum(s.tool_s for s in steps),
        sum(s.units for s in steps),
        sum(estimated) if estimated else None,
    )


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.0f}%"


def table(steps: list[StepTime]) -> str:
    """A Markdown table, one line per step and the total; times in seconds."""
    lines = [
        "| step | wall (s) | tool (s) | harness (s) | harness ÷ tool | units | estimated (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in [*steps, totals(steps)]:
        estimated = "" if s.estimated_s is None else f"{s.estimated_s:.0f}"
        lines.append(
            f"| {s.step} | {s.wall_s:.0f} | {s.tool_s:.0f} | {s.harness_s:.0f} | {_ratio(s.harness_over_tool)} "
            f"| {s.units or ''} | {estimated} |"
        )
    return "\n".join(lines)


def write_csv(steps: list[StepTime], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(FIELDS)
        for s in [*steps, totals(steps)]:
            ratio = s.harness_over_tool
            writer.writerow(
                [
                    s.step,
                    f"{s.wall_s:.3f}",
                    f"{s.tool_s:.3f}",
                    f"{s.harness_s:.3f}",
                    "" if ratio is None else f"{ratio:.4f}",
                    s.units,
                    "" if s.estimated_s is None else f"{s.estimated_s:.3f}",
                ]
            )
    return path
