"""Duet runs: both sides of a comparison measured at the same moment, so the host's moving capacity cancels.

On a shared or cloud host the capacity a run gets moves under it (steal, a neighbour, the clock): one
environment measured after another reads that movement as a difference between them. In a duet
(Bulej, Horký, Tůma, Farquet and Prokopec, "Duet Benchmarking: Improving Measurement Accuracy in the
Cloud", ICPE 2020) the two sides run at once on disjoint CPU sets of equal size, behind a start
barrier, and the evidence is the ratio within each duet: what the host does to both sides at once
cancels out of it. The halves are swapped every repetition, so neither environment keeps the CPUs a
neighbour favours. Every duet run measures the baseline against its own `+replica` too (the A/A
control), in duets of their own.

A duet's records carry its id (`duet`: the repetition and the environment measured beside the
baseline), the CPUs the side ran on, its partner, the share of its measuring time the other side ran
too (`duet_overlap`) and whether the other side was disturbed (`duet_partner_disturbed`). A
disturbance both sides saw is kept (it cancels); a duet is measured again only when the two sides saw
different disturbance. Duet points are half-machine points: ratios, not the paper's absolute figures.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from kitlib.core.errors import KitError

#: the record columns of a duet point (bookkeeping: they never split a configuration)
COLUMNS = ("duet", "duet_cpus", "duet_partner", "duet_overlap", "duet_partner_disturbed")
#: how long a side waits for its partner at a meeting point: each side's commands are bounded by their own
#: timeouts and a side that fails releases the other at once (`Meeting.abort`), so this only bounds a
#: wait for a side that vanished without a word
MEETING_TIMEOUT_S = 4 * 3600.0


@dataclass(frozen=True)
class Pairing:
    """A unit's place in a duet: the duet's id, which half of the CPUs it runs on, and the other side."""

    duet: str
    half: int
    partner: str


def duet_id(repetition: int, beside_baseline: str) -> str:
    """A duet's id: its repetition and the environment measured beside the baseline (the A/A control's
    replica included), the same however often the run is resumed."""
    return f"r{repetition}~{beside_baseline}"


def halves(cpus: Sequence[int]) -> tuple[list[int], list[int]]:
    """Two disjoint CPU sets of equal size from `cpus` (an odd one out is left idle, so neither side has
    more than the other)."""
    ordered = sorted(cpus)
    size = len(ordered) // 2
    if size < 1:
        raise KitError(f"a duet needs two CPUs at least, one a side; this process may use {ordered}")
    return ordered[:size], ordered[size : 2 * size]


def baseline_half(repetition: int) -> int:
    """The half the baseline runs on in a repetition: swapped every repetition."""
    return repetition % 2


def overlap(mine: tuple[float, float], theirs: tuple[float, float]) -> float:
    """The share of this side's measuring time during which the other side measured too (0 to 1)."""
    shared = min(mine[1], theirs[1]) - max(mine[0], theirs[0])
    length = mine[1] - mine[0]
    if length <= 0:
        return 0.0
    return round(max(0.0, min(1.0, shared / length)), 4)


def remeasure_reasons(mine: list[str], theirs: list[str]) -> list[str]:
    """Why a duet is measured again: only when one side was disturbed and the other was not. A disturbance
    both saw (steal, a neighbour, a slower clock on the host) acts on both at once and cancels from
    their ratio, so it is recorded and kept."""
    if bool(mine) == bool(theirs):
        return []
    if mine:
        return [f"this side alone of its duet was disturbed: {'; '.join(mine)}"]
    return [f"the other side alone of its duet was disturbed: {'; '.join(theirs)}"]


class Meeting:
    """Where the two sides of one duet attempt meet: before measuring (the start barrier) and after it
    (each side learns the other's span and disturbance, to compute the overlap and decide alike whether
    to measure again). A side that fails aborts the meeting, so the other never waits on it."""

    def __init__(self, labels: tuple[str, str], timeout: float = MEETING_TIMEOUT_S):
        self.labels = labels
        self._barrier = threading.Barrier(2, timeout=timeout)
        self._spans: dict[int, tuple[float, float]] = {}
        self._disturbed: dict[int, list[str]] = {}

    def start(self, side: int) -> None:
        """Wait until both sides are ready to measure."""
        self._wait(side, "start")

    def exchange(self, side: int, span: tuple[float, float], disturbed: list[str]) -> tuple[float, list[str]]:
        """Post this side's measuring span and disturbance, wait for the other's: (overlap, its disturbance)."""
        self._spans[side], self._disturbed[side] = span, list(disturbed)
        self._wait(side, "end")
        other = 1 - side
        return overlap(span, self._spans[other]), self._disturbed[other]

    def abort(self) -> None:
        """Release a side waiting for this one (which failed or ended)."""
        self._barrier.abort()

    def _wait(self, side: int, where: str) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise KitError(
                f"duet of {self.labels[0]} and {self.labels[1]}: {self.labels[1 - side]} failed or did not reach "
                f"the duet's {where}, so {self.labels[side]} was not measured beside it"
            ) from None


def columns(pairing: Pairing, cpus: Sequence[int], share: float | None, theirs: list[str]) -> dict[str, object]:
    """A duet point's record columns: the other side's disturbance beside this side's own `disturbed`
    tells a disturbance both saw (it cancels) from one side's alone."""
    return {
        "duet": pairing.duet,
        "duet_cpus": ",".join(map(str, cpus)),
        "duet_partner": pairing.partner,
        "duet_overlap": share,
        "duet_partner_disturbed": bool(theirs),
    }
