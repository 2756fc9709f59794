"""Repetitions added until the claims are decided, with intervals that stay valid however the kit stops.

A run planned `--until-decided` starts with the profile's repetitions (at least 3) and may then grow,
by the environments and workloads that undecided claims need, up to `max_repetitions`. Its claims are
looked at only at a schedule fixed in the plan: the profile's repetitions, then each count about 1.6
times the last (3, 5, 8, 13, 21), the last look at `max_repetitions`; a run grows from one look to the
next in one step of repetitions. Every interval on such a run's records is computed at the level 1 − α/K
for its K looks (alpha spending over the looks, Bonferroni's split), recorded in each record as
`ci_alpha`. By the union bound the chance that any interval of a claim, at any look, misses the effect
is at most α, whatever decided when to stop and which environments to repeat: the verdict read at the
end, or at any look between, is wrong at most that often.

Why this rule and not another:
- Group-sequential boundaries (Pocock, O'Brien–Fleming) spend α less conservatively, but they rest on
  equal information added at each look and a known variance; here a look may add runs to one side
  only (a baseline shared by several claims), and at n = 3 the variance is anything but known.
- Anytime-valid confidence sequences for a mean of unknown variance exist, but at the 3 to 20 runs a
  benchmark affords they are wider than the Bonferroni split over a handful of looks.
- The split is exact under any dependence between looks, simple to state, and checked by simulation
  (`benchmarks/calibration.py`: the A/A false-decision rate under adaptive stopping).
- Looks that grow geometrically, not one after every repetition: the split pays for every look, and a
  look one run after the last adds little information. Simulated (lognormal runs, "about equal ±5%" with
  a true ratio of 1, 4000 draws, every run grown to its last look unless decided), looks at 3…8 after
  every repetition (K = 6) decide 32% of claims at a 3% CV and 92% at 2%; looks at 3, 5, 8, 13, 21
  (K = 5) decide 99% and 100%, in 12.4 and 7.0 runs a side on average, and each of their intervals is
  narrower (α/5 against α/6). `benchmarks/time_to_verdict.py` compares them per hour of machine time.
- The schedule ends at the last look the budget's forecast reaches (`kitlib.adaptive.looks_within`):
  a look never reached would still cost every interval its share of α. The forecast is made before any
  point is measured, from the time estimate alone, so the cut is no data-dependent stopping.
- A run still at its first look whose step to the next one the time left cannot pay (the profile ran
  longer than its forecast) will not grow, whatever its claims read: its looks end there, and that look
  spends all of α, the records' `ci_alpha` 0.05 (`kitlib.adaptive.end_looks_out_of_time`, the run's
  `looks.json`). Looks may be dropped when the reason is not the data (Lan and DeMets, 1983); here it is
  the clock and the models' forecast, read before any verdict of the run. A run that grew keeps its split.
- An uneven split that spends more at the first look (α/2 at 3 runs, α/10 at each later one) decides
  no more: at n = 3 the width comes from the noise and the t quantile of few runs, not from how α is
  shared.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

ALPHA = 0.05
#: the record column holding the error rate of every interval on a sequential run's records
COLUMN = "ci_alpha"
RULE = (
    "alpha spending over the looks (Bonferroni): looks at the profile's repetitions and then each count "
    "about 1.6 times the last, up to max_repetitions; each interval at 1 − α/K for the K looks"
)
#: how much each look's count of repetitions exceeds the last: 3, 5, 8, 13, 21
LOOK_GROWTH = 1.6


class Stopping(BaseModel):
    """How far a run may grow under `--until-decided`, and the error rate its verdicts keep."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_repetitions: int = Field(
        21, ge=3, le=100, description="repetitions a run may grow to; the looks' schedule ends there"
    )
    alpha: float = Field(ALPHA, gt=0, lt=1, description="chance, over every look, that a verdict is wrong")
    rule: str = RULE

    def look_points(self, repetitions: int) -> list[int]:
        """The repetition counts at which a run that starts with `repetitions` is looked at: those, then
        each about LOOK_GROWTH times the last, the last look at max_repetitions."""
        points = [repetitions]
        while points[-1] < self.max_repetitions:
            grown = max(points[-1] + 1, math.ceil(points[-1] * LOOK_GROWTH - 1e-9))
            points.append(min(grown, self.max_repetitions))
        return points

    def looks(self, repetitions: int) -> int:
        return len(self.look_points(repetitions))

    def look_from(self, repetitions: int, count: int) -> int | None:
        """The first look at `count` repetitions or past it (None: past the schedule's last look)."""
        return next((point for point in self.look_points(repetitions) if point >= count), None)

    def next_look(self, repetitions: int, have: int) -> int | None:
        """The repetitions of the next look of a run now at `have` (None: it reached its last)."""
        return self.look_from(repetitions, have + 1)

    def look_alpha(self, repetitions: int) -> float:
        return self.alpha / self.looks(repetitions)


def alpha_of(rows: pd.DataFrame) -> float:
    """The error rate an interval on these records is computed at: the smallest `ci_alpha` among them
    (a sequential run's), else the fixed design's α (0.05)."""
    if COLUMN not in rows.columns:
        return ALPHA
    found = pd.to_numeric(rows[COLUMN], errors="coerce").dropna()
    return float(min(found.min(), ALPHA)) if len(found) else ALPHA


def level_text(alpha: float) -> str:
    """'95%' for the fixed design, e.g. '99.38% (sequential)' for a run looked at after each repetition."""
    level = 100 * (1 - alpha)
    if math.isclose(alpha, ALPHA):
        return "95%"
    return f"{level:.4g}% (sequential: α = {ALPHA:g} over its looks)"


#: how sure the kit must be that a claim is out of reach before leaving it: the spread is taken at the
#: lower end of what the runs allow (this one-sided confidence bound of the variance), since at n = 3 the
#: spread itself is barely known and its point estimate would leave most claims a few runs could decide
HOPEFUL_CONFIDENCE = 0.90


def hopeful_variance_factor(n: int) -> float | np.ndarray:
    """The factor on a variance estimated from n runs a side (2n − 2 degrees of freedom) that gives its
    lower HOPEFUL_CONFIDENCE bound (chi-square): runs needed scale with the variance, so a claim is left
    only when even this share of its estimated need exceeds the run's limit."""
    from scipy import stats

    df = np.maximum(2 * np.asarray(n) - 2, 1)
    return df / stats.chi2.ppf(HOPEFUL_CONFIDENCE, df)


def out_of_reach(needed: int, n: int, limit: int) -> bool:
    """Whether a claim needing about `needed` runs a side, read from n runs a side, is beyond a run that
    may grow to `limit`: even at the hopeful end of its spread it would need more."""
    return needed * float(hopeful_variance_factor(n)) > limit


def simulate(
    values: np.ndarray,
    baseline: np.ndarray,
    band: tuple[float, float],
    alphas: list[float],
    start: int = 3,
    give_up_beyond: int | None = None,
    looks: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Looks at a ratio claim in many simulated runs at once: rows of `values` and `baseline` (count ×
    most runs) are the runs a side in the order they would be measured; at the runs a side of each look
    (`looks`, e.g. `Stopping.look_points(3)`; by default one after every run: n = start, start + 1, …)
    the Welch interval of the log ratio at level 1 − alphas[look] is held against `band` (low, high),
    and a row stops at its first decision. With `give_up_beyond` = M a row also stops, undecided, at a look
    where 80% power would need more than M runs a side even at the hopeful end of its spread
    (`out_of_reach`), as `--until-decided` leaves such a claim (`kitlib.adaptive.candidates`). Returns
    each row's verdict ('reproduced', 'not reproduced', 'inconclusive') and the runs a side it used.
    For calibration and time-to-verdict benchmarks."""
    from scipy import stats

    count, most = values.shape
    status = np.full(count, "inconclusive", dtype=object)
    used = np.full(count, most, dtype=int)
    open_rows = np.ones(count, dtype=bool)
    la, lb = np.log(values), np.log(baseline)
    counts = [n for n in (looks or range(start, start + len(alphas)))[: len(alphas)] if n <= most]
    for look, n in enumerate(counts):
        a, b = la[:, :n], lb[:, :n]
        va, vb = a.var(axis=1, ddof=1) / n, b.var(axis=1, ddof=1) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (va + vb) ** 2 / (va**2 / (n - 1) + vb**2 / (n - 1))
        half = stats.t.ppf(1 - alphas[look] / 2, np.nan_to_num(df, nan=2 * n - 2)) * np.sqrt(va + vb)
        centre = a.mean(axis=1) - b.mean(axis=1)
        low, high = np.exp(centre - half), np.exp(centre + half)
        inside = (low >= band[0]) & (high <= band[1])
        outside = (high < band[0]) | (low > band[1])
        decided = open_rows & (inside | outside)
        status[decided & inside] = "reproduced"
        status[decided & outside] = "not reproduced"
        used[decided] = n
        open_rows &= ~decided
        if give_up_beyond is not None:
            beyond = open_rows & ~_within_reach(
                centre,
                np.sqrt(va + vb) * np.sqrt(n / 2 * hopeful_variance_factor(n)),
                band,
                alphas[look],
                give_up_beyond,
            )
            used[beyond] = n
            open_rows &= ~beyond
    used[open_rows] = counts[-1]
    return status, used


def _within_reach(centre: np.ndarray, sd: np.ndarray, band: tuple[float, float], alpha: float, most: int) -> np.ndarray:
    """Rows whose nearest band edge `most` runs a side would likely clear (80% power at level 1 − alpha):
    `stats.runs_for_power` ≤ most, as `claims.core.repetitions_to_decide` reads it, for many rows at once."""
    from scipy import stats

    edges = [math.log(e) for e in band if 0 < e < math.inf]
    if not edges:
        return np.zeros(len(centre), dtype=bool)
    distance = np.min([np.abs(centre - e) for e in edges], axis=0)
    df = 2 * most - 2
    reach = (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(0.8, df)) * sd * math.sqrt(2 / most)
    return reach <= distance
