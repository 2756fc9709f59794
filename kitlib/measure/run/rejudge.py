"""At a run's end, its points judged again against the capacity figure of the whole run.

While a run goes, a point's capacity probes are held against the run's usual figure so far: the median
of its probes until then (`kitlib.measure.capacity`). A machine that changes under the run leaves the
points measured before the change looking normal against the figure of their time. In the sample's LXC
memory run the guest's memory bandwidth rose from about 50 to 85–90 GB/s after its first points; their
probes read 93.5% and 90.1% of the usual figure then, and the later probes put them far below the
run's own. So at a run's end every point that counts is held against the median of all the run's probes
of its kind, by the same rule (`interference.Rule.capacity_reasons`, its floor lowered where the whole
run's probes spread widely); a point the rule now calls
disturbed is measured again, the reason kept with the attempt it replaces: within its attempts, or,
where it was kept on its last, once more beyond them (it counted only because its own moment's figure
was the slowed machine's, as suspect as a point disturbed in every attempt).

Bounded: once per `run_plan` that measured something (a resumed run with nothing left was judged at its
own end), and only where the points found are at most a third of the run's probed
points. A majority of points defines a usual figure; a machine with two regimes of about equal length has
none, and measuring half a run again would only move the split. Such a run keeps its points, said so.

A point disturbed in every one of its attempts is left out of the claims, and on a shared host that
leaves a comparison short of its 3 runs a side, undecidable: the disturbances there come in bursts
(a neighbour's job of a few minutes), and its attempts followed each other inside one. So at the run's
end such a point is measured once more, after the run's other points: one attempt beyond
`Rule.max_attempts`, never a second (a point kept after its first attempt while the machine stayed
disturbed, `Rule.weather_after`: the attempts it had left), and only where such points are at most a
third of the run's points (a machine busy all along would disturb that attempt too).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from kitlib.core.interference import Rule
from kitlib.measure import capacity

#: the largest share of a run's probed points measured again at its end
MAX_SHARE = 1 / 3
#: readings of a kind the whole run's figure needs: the probes before and after three points
MIN_READINGS = 6
#: the unit-file entry (under `interference`) holding a point's own probe readings
ENTRY = "capacity_probes"
#: the unit-file entry (under `interference`) saying why a disturbed point was kept before its last attempt
HELD = "held"


@dataclass(frozen=True)
class Late:
    """A point to measure again, and why."""

    key: str
    reason: str
    #: a point disturbed in every attempt, measured once more (not one the whole run's figure found)
    exhausted: bool = False


def readings(kind: str, before: float | None, after: float | None, usual: float | None) -> dict[str, Any]:
    """What a unit file keeps of the probes around its point: the raw figures, not only their share."""
    return {"kind": kind, "before": before, "after": after, "usual": usual}


def _probes(unit: dict[str, Any]) -> dict[str, Any] | None:
    found = (unit.get("interference") or {}).get(ENTRY)
    return found if isinstance(found, dict) and found.get("kind") else None


def _whole_run_readings(units: list[dict[str, Any]]) -> dict[str, list[float]]:
    """The probes around the run's counted, undisturbed points, by kind, where there are enough: a
    discarded attempt's probes, or those of a point every attempt of which was disturbed, would pull the
    figure towards the disturbance."""
    found: dict[str, list[float]] = {}
    for unit in units:
        probes = _probes(unit)
        if probes and unit.get("status") == "ok" and not (unit.get("interference") or {}).get("disturbed"):
            taken = [v for v in (probes.get("before"), probes.get("after")) if isinstance(v, int | float)]
            found.setdefault(probes["kind"], []).extend(taken)
    return {kind: values for kind, values in found.items() if len(values) >= MIN_READINGS}


def whole_run_usual(units: list[dict[str, Any]]) -> dict[str, float]:
    """The median of the probes around the run's counted, undisturbed points, by kind."""
    return {kind: statistics.median(values) for kind, values in _whole_run_readings(units).items()}


def to_measure_again(units: list[dict[str, Any]], rule: Rule) -> tuple[list[Late], str | None]:
    """The run's counted points (its unit files, `RunStore.units`) the rule calls disturbed against the
    whole run's usual figure, not yet measured beyond their attempts; and, where there are too many to
    measure again, why none is (the list is then empty)."""
    readings_of = _whole_run_readings(units)
    usual = {kind: statistics.median(values) for kind, values in readings_of.items()}
    spread = {kind: capacity.spread_pct(values) for kind, values in readings_of.items()}
    probed, late = 0, []
    for unit in units:
        probes = _probes(unit)
        if unit.get("status") != "ok" or probes is None or probes["kind"] not in usual:
            continue
        before, after = probes.get("before"), probes.get("after")
        if not isinstance(before, int | float) or not isinstance(after, int | float):
            continue
        probed += 1
        judged = unit.get("interference") or {}
        attempt = int(judged.get("attempt") or 1)
        if judged.get("disturbed") or attempt > rule.max_attempts:
            continue  # counted as disturbed (`once_more` may take it), or measured once more already
        figure, then = usual[probes["kind"]], probes.get("usual")
        said = rule.capacity_reasons(round(100.0 * min(before, after) / figure, 1), spread[probes["kind"]])
        if said:
            figures = f"{figure:.4g}" + (f"; {then:.4g} when it ran" if isinstance(then, int | float) else "")
            last = (
                f" (its last of {rule.max_attempts} attempts: measured once more)"
                if attempt == rule.max_attempts
                else ""
            )
            late.append(
                Late(
                    unit["key"],
                    f"judged at the run's end against the whole run's usual {probes['kind']} probe figure "
                    f"({figures}): {'; '.join(said)}{last}",
                )
            )
    if len(late) > MAX_SHARE * probed:
        return [], (
            f"{len(late)} of {probed} probed points are outside the rule against the whole run's usual figure: "
            "the machine ran in two regimes of about equal length, so no figure is usual and they are kept"
        )
    return late + once_more(units, rule), None


def once_more(units: list[dict[str, Any]], rule: Rule) -> list[Late]:
    """The run's points disturbed in every one of their `rule.max_attempts` attempts, or kept disturbed
    before them while the machine stayed disturbed (`HELD`), each to be measured once more at the run's
    end; none where they are over a third of the run's counted points."""
    counted = [unit for unit in units if unit.get("status") == "ok"]
    found = []
    for unit in counted:
        judged = unit.get("interference") or {}
        attempt = int(judged.get("attempt") or 1)
        if not judged.get("disturbed") or (attempt != rule.max_attempts and not judged.get(HELD)):
            continue
        reasons = "; ".join(str(r) for r in judged["disturbed"])
        every = f"every one of its {attempt} attempts" if attempt > 1 else "its only attempt"
        found.append(
            Late(
                unit["key"],
                f"disturbed in {every} ({reasons}): measured once more at the run's end, after its other points",
                exhausted=True,
            )
        )
    return found if len(found) <= MAX_SHARE * len(counted) else []
