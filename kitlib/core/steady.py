"""Is a time-bound point in steady state, and how long must it run to be?

A tool that reports sub-intervals (sysbench's `--report-interval`, fio's IOPS and bandwidth log,
nuttcp's `-i`, redis-benchmark's rate every quarter second, sockperf's full log reduced to quarter
seconds) shows how its figure moved while the point ran. Two things can make the figure it
prints for the whole run untrustworthy, and both are read from those sub-intervals:

- a warm-up inside the point (connections opening, caches filling): the truncation point of MSER
  (White 1997, "An effective truncation heuristic for bias reduction in simulation output"), which
  picks the number d of leading sub-intervals whose removal minimises the squared standard error of
  the rest; MSER-5 (batches of 5) where there are at least 50 sub-intervals, MSER on single values
  below. The warm-up's effect on the whole-run figure is the relative difference between the mean of
  all sub-intervals and the mean after the truncation (`bias_pct`);
- too short a point: the 95% half-width of the mean of the sub-intervals, from batch means (at most
  10 batches, so that neighbouring sub-intervals, which are correlated, fall into one batch), relative
  to that mean (`half_width_pct`). It is taken over every sub-interval, the window the tool's own
  figure covers; the warm-up's share of that figure is bounded by the rule on `bias_pct`.

`Rule` holds the thresholds; a point that misses one is measured again for longer (the runner keeps
the discarded attempt with its reason), up to `max_factor` times its profile's duration. The tool's own
figure for the whole run stays the point's value: the rule bounds what a warm-up and a short run may do
to it instead of replacing it by a number the tool did not print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

#: sub-intervals at which MSER batches them in fives (MSER-5)
MSER5_FROM = 50
#: batches of the steady window the half-width is computed from, at most and at least
MAX_BATCHES, MIN_BATCHES = 10, 4
#: the record columns of a point's steadiness (bookkeeping: how the point went, not what it measured)
COLUMNS = ("steady", "steady_halfwidth_pct", "steady_bias_pct", "warmup_s", "point_seconds")


class Rule(BaseModel):
    """When a time-bound point is steady enough to count. The defaults' reasons:

    - max_halfwidth_pct 2: the point's own 95% half-width stays well inside the narrowest bands the
      claims test (±5% for "about equal"), so that the spread between runs, not within a point,
      decides how many runs a claim needs.
    - max_bias_pct 1: a warm-up may move the whole-run figure by at most half of that.
    - max_factor 4: a point grows to at most four times its profile's duration; past that it counts as
      it is, marked unsteady, so a host that never settles costs bounded time.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_halfwidth_pct: float = Field(2.0, gt=0, le=100)
    max_bias_pct: float = Field(1.0, gt=0, le=100)
    max_factor: float = Field(4.0, ge=1, le=100)


DEFAULT_RULE = Rule()

#: the rule's values per profile where they differ from the defaults. `quick` promises a reproduce in
#: well under an hour: its points run their floor duration (8-s MySQL and OLTP, 6-s fio) and record
#: whether they were steady instead of growing; on a guest whose disk and CPU are shared, growing every
#: fio and MySQL point towards 4× took a quick reproduce past 70 minutes, and more repetitions (the
#: spread between runs decides a claim) buy more than longer points. `standard` and `paper` grow them.
PROFILE_DEFAULTS: dict[str, dict[str, float]] = {"quick": {"max_factor": 1.0}}


def rule_values(profile: str, given: dict | None) -> dict:
    """The steady-state rule a plan of this profile records: the profile's values, then those given."""
    return {**PROFILE_DEFAULTS.get(profile, {}), **(given or {})}


@dataclass(frozen=True)
class Steadiness:
    """What the sub-intervals of one point say."""

    intervals: int
    interval_s: float
    warmup: int  # leading sub-intervals MSER finds transient
    mean: float  # over the steady window, after the warm-up
    whole_mean: float  # over every sub-interval
    half_width_pct: float  # of the whole mean; NaN where there are too few sub-intervals
    bias_pct: float
    largest_part: int = 0  # of a point assessed in parts (`worst`), the sub-intervals of its longest part

    @property
    def warmup_s(self) -> float:
        return self.warmup * self.interval_s

    @property
    def method(self) -> str:
        return f"MSER-{5 if (self.largest_part or self.intervals) >= MSER5_FROM else 1}"


def mser_truncation(values: np.ndarray) -> int:
    """Leading values to drop (MSER, batched by 5 where there are at least MSER5_FROM values): the d
    in [0, n/2] minimising Σ(x_i − mean)² / (n − d)² over the rest."""
    batch = 5 if len(values) >= MSER5_FROM else 1
    usable = len(values) - len(values) % batch
    batches = values[:usable].reshape(-1, batch).mean(axis=1)
    n = len(batches)
    scores = [float(((batches[d:] - batches[d:].mean()) ** 2).sum()) / (n - d) ** 2 for d in range(n // 2 + 1)]
    return int(np.argmin(scores)) * batch  # the first of equal minima: nothing dropped without a gain


def half_width_pct(values: np.ndarray) -> float:
    """Relative 95% half-width of the mean from batch means; NaN below MIN_BATCHES sub-intervals."""
    from scipy import stats

    if len(values) < MIN_BATCHES:
        return math.nan
    k = min(MAX_BATCHES, len(values))
    size = len(values) // k
    means = values[len(values) - k * size :].reshape(k, size).mean(axis=1)  # a remainder from the start gives way
    mean = float(means.mean())
    if mean == 0:
        return math.nan
    se = float(means.std(ddof=1)) / math.sqrt(k)
    return 100 * float(stats.t.ppf(0.975, k - 1)) * se / abs(mean)


def assess(values: list[float] | np.ndarray, interval_s: float) -> Steadiness:
    """The steadiness of one point's sub-interval figures (equal intervals of `interval_s` seconds)."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0 or not np.isfinite(x).all():
        raise ValueError("steadiness needs finite sub-interval values")
    warmup = mser_truncation(x)
    steady = x[warmup:]
    mean, whole = float(steady.mean()), float(x.mean())
    bias = 100 * (whole - mean) / abs(mean) if mean else math.nan
    return Steadiness(len(x), interval_s, warmup, mean, whole, half_width_pct(x), bias)


def worst(parts: dict[str, Steadiness]) -> Steadiness:
    """One point's steadiness from its parts (redis-benchmark's SET and GET phases, each with its own
    rate): the largest half-width and the warm-up bias farthest from 0 among them, the warm-ups added.
    Its means are left NaN: the parts measure different things."""
    found = list(parts.values())
    widths = [f.half_width_pct for f in found if not math.isnan(f.half_width_pct)]
    biases = [f.bias_pct for f in found if not math.isnan(f.bias_pct)]
    return Steadiness(
        intervals=sum(f.intervals for f in found),
        interval_s=found[0].interval_s,
        warmup=sum(f.warmup for f in found),
        mean=math.nan,
        whole_mean=math.nan,
        half_width_pct=math.nan if len(widths) < len(found) else max(widths),
        bias_pct=max(biases, key=abs) if biases else math.nan,
        largest_part=max(f.intervals for f in found),
    )


def reasons(rule: Rule, found: Steadiness) -> list[str]:
    """Why the point is not steady enough to count, empty when it is."""
    out = []
    if math.isnan(found.half_width_pct):
        out.append(f"{found.intervals} sub-interval(s): too few for a half-width")
    elif found.half_width_pct > rule.max_halfwidth_pct:
        out.append(f"95% half-width {found.half_width_pct:.1f}% > {rule.max_halfwidth_pct:g}%")
    if not math.isnan(found.bias_pct) and abs(found.bias_pct) > rule.max_bias_pct:
        out.append(
            f"a warm-up of {found.warmup_s:g} s ({found.method}) moves the figure by {found.bias_pct:+.1f}% "
            f"(> {rule.max_bias_pct:g}%)"
        )
    return out


def longer(rule: Rule, found: Steadiness, seconds: float, profile_seconds: float) -> float | None:
    """The duration that would meet the rule (the half-width shrinks as 1/√t, a warm-up's share as 1/t),
    a fifth more for safety, in whole seconds (sysbench takes no fraction), at most `max_factor` × the
    profile's; None when the point is already there."""
    cap = max(rule.max_factor * profile_seconds, 1.0)
    if seconds >= math.floor(cap):
        return None
    factor = 2.0
    if not math.isnan(found.half_width_pct):
        factor = max(1.0, (found.half_width_pct / rule.max_halfwidth_pct) ** 2)
    if not math.isnan(found.bias_pct):
        factor = max(factor, abs(found.bias_pct) / rule.max_bias_pct)
    return float(min(math.floor(cap), math.ceil(seconds * factor * 1.2)))


def columns(found: Steadiness | None, steady: bool | None, seconds: float | None) -> dict[str, object]:
    """The record columns of a point's steadiness; a point without sub-intervals leaves them missing
    (its `steady` too, unless the rule judged it: a Redis point whose phases each ended within a tick)."""
    if found is None:
        return dict.fromkeys(COLUMNS) | {"point_seconds": seconds, "steady": steady}
    return {
        "steady": steady,
        "steady_halfwidth_pct": None if math.isnan(found.half_width_pct) else round(found.half_width_pct, 3),
        "steady_bias_pct": None if math.isnan(found.bias_pct) else round(found.bias_pct, 3),
        "warmup_s": round(found.warmup_s, 3),
        "point_seconds": seconds,
    }
