"""Where a reproduce spends its time: per experiment, the wall time split into tool time (the units'
benchmark commands, as the store records them) and harness time, itself itemised: the capacity probes
around points, the attempts measured again (discarded), the environments' starts, workload preparations
and stops, and the rest (sampling, parsing, writing unit files, the image, notebooks).

Tool time of a unit is its `tool_seconds` (the summed run time of the commands it ran, at most its wall
time); a store written before that field existed gives the unit's `seconds` (its whole measure call).
The two sides of a duet point ran at once: their time counts once, the longer side's.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

FIELDS = (
    "step",
    "wall_s",
    "tool_s",
    "harness_s",
    "harness_over_tool",
    "probes_s",
    "remeasured_s",
    "environments_s",
    "rest_s",
    "units",
    "estimated_s",
)


@dataclass(frozen=True)
class StepTime:
    """One line of the table: an experiment's run, or an analysis notebook (no tool time)."""

    step: str
    wall_s: float
    tool_s: float = 0.0
    units: int = 0
    #: what the estimate said before the step ran (None: no estimate)
    estimated_s: float | None = None
    #: the harness's parts that the run's files tell (`Parts`); the rest is `rest_s`
    parts: Parts | None = None

    @property
    def harness_s(self) -> float:
        return max(0.0, self.wall_s - self.tool_s)

    @property
    def rest_s(self) -> float | None:
        if self.parts is None:
            return None
        return max(0.0, self.harness_s - self.parts.probes_s - self.parts.remeasured_s - self.parts.environments_s)

    @property
    def harness_over_tool(self) -> float | None:
        return self.harness_s / self.tool_s if self.tool_s > 0 else None


@dataclass(frozen=True)
class Parts:
    """The harness's time a run's files account for: probes, attempts measured again, environments."""

    probes_s: float = 0.0
    remeasured_s: float = 0.0
    environments_s: float = 0.0

    def __add__(self, other: Parts) -> Parts:
        return Parts(
            self.probes_s + other.probes_s,
            self.remeasured_s + other.remeasured_s,
            self.environments_s + other.environments_s,
        )


def store_parts(run_root: Path, since: str | None = None) -> Parts:
    """The harness's parts of the run's units finished at or after `since` (None = all) and of its sessions
    begun then: the kept units' probes, the discarded attempts' whole time (a duet's two sides once), the
    environments' starts, preparations and stops."""
    probes, duets, remeasured = 0.0, {}, 0.0
    for path in sorted((Path(run_root) / "units").glob("*.json")):
        unit = json.loads(path.read_text())
        if since is not None and str(unit.get("finished", "")) < since:
            continue
        if ".attempt" in path.name:
            seconds = float(unit.get("seconds") or 0.0)
            if unit.get("duet"):
                point = (str(unit["duet"]), str(unit.get("workload")), json.dumps(unit.get("point"), sort_keys=True))
                duets[point] = max(duets.get(point, 0.0), seconds)
            else:
                remeasured += seconds
        elif unit.get("status") == "ok":
            probes += float(unit.get("probe_seconds") or 0.0)
    environments = 0.0
    provenance = Path(run_root) / "provenance.json"
    sessions = json.loads(provenance.read_text()).get("sessions") or [] if provenance.exists() else []
    for session in sessions:
        if since is not None and str(session.get("started", "")) < since:
            continue
        for entry in session.get("environment_seconds") or []:
            environments += sum(float(entry.get(k) or 0.0) for k in ("start_s", "prepare_s", "stop_s"))
    return Parts(round(probes, 3), round(remeasured + sum(duets.values()), 3), round(environments, 3))


def unit_tool_seconds(unit: dict) -> float:
    value = unit.get("tool_seconds", unit.get("seconds"))
    return float(value or 0.0)


def store_tool_time(run_root: Path, since: str | None = None) -> tuple[float, int]:
    """Summed tool time and count of the run's done units that finished at or after `since` (an ISO
    time as the store writes it; None = all), so a resumed run counts only this session's units. The two
    sides of a duet point ran at once: their tool time is the longer side's, once."""
    count = 0
    alone = 0.0
    duets: dict[tuple[str, str, str], float] = {}
    for path in sorted((Path(run_root) / "units").glob("*.json")):
        unit = json.loads(path.read_text())
        if unit.get("status") != "ok":
            continue
        if since is not None and str(unit.get("finished", "")) < since:
            continue
        seconds = unit_tool_seconds(unit)
        count += 1
        if unit.get("duet"):
            point = (str(unit["duet"]), str(unit.get("workload")), json.dumps(unit.get("point"), sort_keys=True))
            duets[point] = max(duets.get(point, 0.0), seconds)
        else:
            alone += seconds
    return alone + sum(duets.values()), count


def totals(steps: list[StepTime]) -> StepTime:
    estimated = [s.estimated_s for s in steps if s.estimated_s is not None]
    parts = [s.parts for s in steps if s.parts is not None]
    return StepTime(
        "total",
        sum(s.wall_s for s in steps),
        sum(s.tool_s for s in steps),
        sum(s.units for s in steps),
        sum(estimated) if estimated else None,
        sum(parts, Parts()) if parts else None,
    )


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.0f}%"


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def table(steps: list[StepTime]) -> str:
    """A Markdown table, one line per step and the total; times in seconds, the harness in its parts."""
    lines = [
        "| step | wall (s) | tool (s) | harness (s) | harness ÷ tool | probes (s) | measured again (s) "
        "| environments (s) | rest (s) | units | estimated (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in [*steps, totals(steps)]:
        p = s.parts
        lines.append(
            f"| {s.step} | {s.wall_s:.0f} | {s.tool_s:.0f} | {s.harness_s:.0f} | {_ratio(s.harness_over_tool)} "
            f"| {_seconds(p and p.probes_s)} | {_seconds(p and p.remeasured_s)} | {_seconds(p and p.environments_s)} "
            f"| {_seconds(s.rest_s)} | {s.units or ''} | {_seconds(s.estimated_s)} |"
        )
    return "\n".join(lines)


def write_csv(steps: list[StepTime], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(FIELDS)
        for s in [*steps, totals(steps)]:
            ratio = s.harness_over_tool
            p = s.parts
            writer.writerow(
                [
                    s.step,
                    f"{s.wall_s:.3f}",
                    f"{s.tool_s:.3f}",
                    f"{s.harness_s:.3f}",
                    "" if ratio is None else f"{ratio:.4f}",
                    "" if p is None else f"{p.probes_s:.3f}",
                    "" if p is None else f"{p.remeasured_s:.3f}",
                    "" if p is None else f"{p.environments_s:.3f}",
                    "" if s.rest_s is None else f"{s.rest_s:.3f}",
                    s.units,
                    "" if s.estimated_s is None else f"{s.estimated_s:.3f}",
                ]
            )
    return path
