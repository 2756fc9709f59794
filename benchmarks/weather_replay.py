"""What `Rule.weather_after` saves and costs on runs already made (prints the figures).

A disturbed point is measured again at most `max_attempts` times; once `weather_after` points in a row
were kept disturbed, the runner keeps a disturbed point after its first attempt. This script replays
the unit files of finished runs (`units/<key>.json` and its `.attempt<N>.json`, each with when it
started, how long it took and whether it was disturbed) in the order their points started, as the rule
would have seen them, and prints for each threshold: the attempts and seconds it would have left out,
and the points it would have kept disturbed that a later attempt in fact measured undisturbed (rescues
lost). The replay holds the first attempt's outcome as it was; only the attempts after it change.
Runs made with the rule in force hold no attempts it left out, so replay runs made before it or with
`--interference '{"weather_after": null}'`. Reads files only. Run:
    PYTHONPATH=$PWD python benchmarks/weather_replay.py RESULTS_DIR [RESULTS_DIR ...]
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

THRESHOLDS = (1, 2, 3, 4, None)


@dataclass(frozen=True)
class Point:
    """One point's attempts in the order they ran: (started, seconds, disturbed) each."""

    started: str
    attempts: tuple[tuple[str, float, bool], ...]

    @property
    def kept_disturbed(self) -> bool:
        return self.attempts[-1][2]


def points_of(units: Path) -> list[Point]:
    """The run's counted points with all their attempts; failed points (no outcome) left out."""
    by_key: dict[str, list[tuple[str, float, bool]]] = {}
    for path in units.glob("*.json"):
        unit = json.loads(path.read_text())
        if unit.get("status") not in ("ok", "discarded") or not unit.get("started"):
            continue
        judged = unit.get("interference") or {}
        disturbed = ".attempt" in path.name or bool(judged.get("disturbed"))
        key = path.name.split(".attempt")[0].removesuffix(".json")
        by_key.setdefault(key, []).append((unit["started"], float(unit.get("seconds") or 0.0), disturbed))
    found = [Point(min(a[0] for a in attempts), tuple(sorted(attempts))) for attempts in by_key.values()]
    return sorted(found, key=lambda p: p.started)


def replay(points: list[Point], weather_after: int | None) -> tuple[int, float, int]:
    """(attempts left out, their seconds, rescues lost) had the rule held a disturbed point after its first
    attempt once `weather_after` points in a row were kept disturbed."""
    streak = skipped = lost = 0
    seconds = 0.0
    for point in points:
        first_disturbed = point.attempts[0][2]
        if weather_after is not None and streak >= weather_after and first_disturbed:
            skipped += len(point.attempts) - 1
            seconds += sum(a[1] for a in point.attempts[1:])
            lost += not point.kept_disturbed
            streak += 1
            continue
        streak = streak + 1 if point.kept_disturbed else 0
    return skipped, seconds, lost


def main(roots: list[str]) -> None:
    if not roots:
        sys.exit(__doc__)
    runs = sorted((units, Path(root)) for root in roots for units in Path(root).glob("*/*/units") if units.is_dir())
    if not runs:
        sys.exit(f"no run folders (<experiment>/<run>/units) under {', '.join(roots)}")
    print(f"{'run':<40} {'points':>6} {'attempts':>8}  " + "  ".join(f"{f'after {t}':>22}" for t in THRESHOLDS))
    totals = {t: [0, 0.0, 0] for t in THRESHOLDS}
    all_points = all_attempts = 0
    for units, root in runs:
        points = points_of(units)
        attempts = sum(len(p.attempts) for p in points)
        all_points, all_attempts = all_points + len(points), all_attempts + attempts
        cells = []
        for threshold in THRESHOLDS:
            skipped, seconds, lost = replay(points, threshold)
            totals[threshold][0] += skipped
            totals[threshold][1] += seconds
            totals[threshold][2] += lost
            cells.append(f"{skipped:>4} att {seconds:>6.0f} s {lost:>3} lost")
        name = f"{root.resolve().parent.name}/{units.parent.relative_to(root)}"
        print(f"{name:<40} {len(points):>6} {attempts:>8}  " + "  ".join(cells))
    print(
        f"{'total':<40} {all_points:>6} {all_attempts:>8}  "
        + "  ".join(f"{s:>4} att {sec:>6.0f} s {lost:>3} lost" for s, sec, lost in totals.values())
    )
    print("columns: attempts a weather_after of 1, 2, 3, 4 or none (always up to max_attempts) would have left out,")
    print("their seconds, and the points it would have kept disturbed that a later attempt measured undisturbed")


if __name__ == "__main__":
    main(sys.argv[1:])
