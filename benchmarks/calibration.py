"""Calibration of the verdict rule on synthetic data with a known truth (prints the figures and a table).

False positives: both sides drawn from one distribution (CV 5%, n = 10 a side); how often the 95%
interval of the ratio excludes 1 (decided different), and how often an "about equal (±5%)" claim comes
out "not reproduced". Power: a real 10% effect at n = 10, CV 5%. Then the design cases, each through the
claims' own code (`core.effect_between`): an A/A comparison at n = 3; four configurations measured by one
process per run (correlation 0.9), combined as independent against aggregated per run first; a machine
drifting +18% to +33% over a run, blocked (a blocked comparison is decided only where the drift
test clears its run: no trend found and none over 5% within its interval; at these sizes it never
can) and interleaved (the repetition as a block: A/A "different" in about 5%, and at least the power
of Welch's test where the drift test finds a trend). Last, repetitions added until decided
(`kitlib.core.sequential`): an A/A "higher" claim grown from 3 runs to 21 and looked at 3, 5, 8, 13 and 21,
each look at 95% (the naive rule) against each at the looks' level α/K, and an "about equal" claim at CV
2%. Then claims of k = 1, 4, 8 and 15 parts, each part a configuration that must hold, through the
claims' own combination of parts (`core.combine`): with the truth on a band edge, "not reproduced"
without a correction (1 − 0.975^k) and with Holm's step-down over the parts (at most 5% whatever k);
"reproduced" with the truth well inside (the intersection-union rule, no correction, power kept); and
"not reproduced" where one part is truly 15% off (what the correction costs). Last, duets
(`kitlib.measure.run.duet`): an A/A duet at n = 3 to 21 duets decided "different" by the within-duet
paired t, beside the same values read one at a time, and the power at a real 5% effect. Run:
    PYTHONPATH=$PWD python benchmarks/calibration.py
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from kitlib.analyse.claims import core
from kitlib.analyse.claims.core import NOT_REPRODUCED, REPRODUCED, about_equal, at_least_higher, band_status
from kitlib.core import sequential
from kitlib.core.stats import paired_log_intervals, welch_log_intervals

SEED = 20140721
DRAWS = 20000
#: the drift this kind of machine shows over a run (issue measurements: +18% to +33%)
DRIFT = (0.18, 0.33)


def draws(effect: float, n: int = 10, cv: float = 0.05, count: int = DRAWS, seed: int = SEED):
    """`count` pairs of samples: baseline around 100, the other around 100 × (1 + effect)."""
    rng = np.random.default_rng(seed)
    sigma = np.sqrt(np.log1p(cv**2))
    base = 100 * rng.lognormal(0, sigma, (count, n))
    other = 100 * (1 + effect) * rng.lognormal(0, sigma, (count, n))
    return other, base


def figures(n: int = 10, cv: float = 0.05, count: int = DRAWS) -> dict[str, float]:
    other, base = draws(0.0, n, cv, count)
    _, low, high = welch_log_intervals(other, base)
    null_different = float(np.mean((low > 1) | (high < 1)))
    null_equal_refuted = float(np.mean(band_status(low, high, about_equal(0.05)) == NOT_REPRODUCED))
    other, base = draws(0.10, n, cv, count, SEED + 1)
    _, low, high = welch_log_intervals(other, base)
    power = float(np.mean((low > 1) | (high < 1)))
    power_claim = float(np.mean(band_status(low, high, at_least_higher(0.0)) == REPRODUCED))
    return {
        "false_positive_rate": null_different,
        "about_equal_refuted_under_no_effect": null_equal_refuted,
        "power_10pct_n10": power,
        "higher_claim_reproduced_10pct_n10": power_claim,
    }


def excludes_one(low, high) -> np.ndarray:
    return (np.asarray(low) > 1) | (np.asarray(high) < 1)


# ---------------------------------------------------------------- A/A at n = 3


def aa_at_n3(count: int = DRAWS, cv: float = 0.05) -> dict[str, float]:
    """No effect, 3 runs a side: how often Welch's and the paired interval exclude 1, and how often an
    "about equal" claim is refuted (a false decision either way)."""
    other, base = draws(0.0, 3, cv, count, SEED + 10)
    _, low, high = welch_log_intervals(other, base)
    _, plow, phigh = paired_log_intervals(other, base)
    return {
        "welch_different": float(excludes_one(low, high).mean()),
        "paired_different": float(excludes_one(plow, phigh).mean()),
        "equal_refuted": float(np.mean(band_status(low, high, about_equal(0.05)) == NOT_REPRODUCED)),
    }


# ---------------------------------------------------------------- correlated configurations


def correlated_draws(count: int, n: int, k: int, rho: float, cv: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Log values (count, n runs, k configurations) a side: each run's k configurations correlated by rho
    (one process measured them all), no effect between the sides."""
    rng = np.random.default_rng(seed)
    sigma = np.sqrt(np.log1p(cv**2))
    cov = sigma**2 * (rho * np.ones((k, k)) + (1 - rho) * np.eye(k))
    levels = np.log(np.linspace(20, 40, k))
    a = levels + rng.multivariate_normal(np.zeros(k), cov, (count, n))
    b = levels + rng.multivariate_normal(np.zeros(k), cov, (count, n))
    return a, b


def pooled_as_independent(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The former rule: mean of the per-configuration effects, its standard error from theirs as if
    independent, the fewest Welch degrees of freedom. (low, high) of the ratio."""
    n, k = a.shape[1], a.shape[2]
    diff = (a.mean(axis=1) - b.mean(axis=1)).mean(axis=-1)
    va, vb = a.var(axis=1, ddof=1) / n, b.var(axis=1, ddof=1) / n
    se = np.sqrt((va + vb).sum(axis=-1)) / k
    df = ((va + vb) ** 2 / (va**2 / (n - 1) + vb**2 / (n - 1))).min(axis=-1)
    half = sps.t.ppf(0.975, np.maximum(df, 1.0)) * se
    return np.exp(diff - half), np.exp(diff + half)


def correlated_configurations(
    count: int = DRAWS, n: int = 3, k: int = 4, rho: float = 0.9, cv: float = 0.05
) -> dict[str, float]:
    """A/A with k configurations of one process per run: how often the combined interval excludes 1,
    combined as independent (before) and with each run aggregated first (the geometric mean over its
    configurations, then Welch's t: the claims' rule now)."""
    a, b = correlated_draws(count, n, k, rho, cv, SEED + 20)
    low, high = pooled_as_independent(a, b)
    _, alow, ahigh = welch_log_intervals(np.exp(a.mean(axis=-1)), np.exp(b.mean(axis=-1)))
    return {
        "pooled_different": float(excludes_one(low, high).mean()),
        "per_run_different": float(excludes_one(alow, ahigh).mean()),
    }


def correlated_records(a: np.ndarray, b: np.ndarray) -> pd.DataFrame:
    """One draw of `correlated_draws` as records: run r of each side is one unit holding every kernel."""
    rows = []
    for env, side, offset in (("native+replica", a, 0), ("native", b, a.shape[0])):
        for r, run in enumerate(side):
            for c, value in enumerate(run):
                rows.append(_record(env, math.exp(value), r, offset + r, kernel=f"k{c}"))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- drift under both orders


def _record(env: str, value: float, repetition: int, position: int, **config) -> dict:
    return {
        "experiment": "cpu",
        "workload": "w",
        "metric": "throughput",
        "env": env,
        "value": value,
        "unit": "ops/s",
        "run_id": "r",
        "repetition": repetition,
        "position": position,
        **config,
    }


def drifting_run(
    rng: np.random.Generator, order: str, n: int, points: int, effect: float, cv: float, drift: tuple[float, float]
) -> pd.DataFrame:
    """One run of two environments (A/A when effect is 0) × `points` configurations × n repetitions, in
    the given order, on a machine whose values rise linearly by a drawn share of `drift` over the run."""
    sigma = np.sqrt(np.log1p(cv**2))
    if order == "blocked":
        units = [(env, p, r) for env in ("native+replica", "native") for p in range(points) for r in range(n)]
    else:
        units = []
        for r in range(n):
            envs = ["native+replica", "native"]
            rng.shuffle(envs)
            units += [(env, p, r) for env in envs for p in range(points)]
    total = rng.uniform(*drift)
    last = len(units) - 1
    rows = []
    for position, (env, p, r) in enumerate(units):
        level = 100 * (1 + p) * (1 + total * position / last) * (1 + effect if env == "native+replica" else 1)
        rows.append(_record(env, level * rng.lognormal(0, sigma), r, position, clients=p))
    return pd.DataFrame(rows)


def drift_case(
    order: str,
    count: int,
    n: int = 3,
    points: int = 4,
    effect: float = 0.0,
    cv: float = 0.05,
    drift: tuple[float, float] = DRIFT,
    seed: int = SEED + 30,
) -> dict[str, float]:
    """Through the claims' code, configuration 0 of each drawn run: how often the drift makes the
    comparison undecided (flagged), how often it is decided "different" (interval excluding 1, not
    flagged), how often its interval excludes 1 at all (what the rule decided before it looked at the
    order), and how often the paired analysis was used."""
    rng = np.random.default_rng(seed)
    flagged = different = excluded = paired = 0
    for _ in range(count):
        run = drifting_run(rng, order, n, points, effect, cv, drift)
        found = core.effect_between(run[run["clients"] == 0], "native+replica", "native", context=run)
        out = bool(found.low > 1 or found.high < 1)
        flagged += bool(found.undecided)
        excluded += out
        different += out and not found.undecided
        paired += found.paired
    return {
        "flagged": flagged / count,
        "different": different / count,
        "excluded": excluded / count,
        "paired": paired / count,
    }


def block_power(
    count: int, n: int, effect: float, cv: float, drift: tuple[float, float], points: int = 4, seed: int = SEED + 40
) -> dict[str, float]:
    """Interleaved runs (vectorised): how often Welch's and the paired interval exclude 1 for configuration
    0, the truth being `effect`: the power of each analysis with and without a drift (and its A/A rate)."""
    rng = np.random.default_rng(seed)
    sigma = np.sqrt(np.log1p(cv**2))
    per_rep = 2 * points
    last = n * per_rep - 1
    first = rng.integers(0, 2, (count, n))  # which environment runs first in each repetition
    start = np.arange(n) * per_rep
    pos_a = start + np.where(first == 0, 0, points)
    pos_b = start + np.where(first == 0, points, 0)
    total = rng.uniform(*drift, (count, 1)) if drift[1] > 0 else np.zeros((count, 1))
    a = (1 + effect) * (1 + total * pos_a / last) * rng.lognormal(0, sigma, (count, n))
    b = (1 + total * pos_b / last) * rng.lognormal(0, sigma, (count, n))
    _, low, high = welch_log_intervals(a, b)
    _, plow, phigh = paired_log_intervals(a, b)
    return {"welch": float(excludes_one(low, high).mean()), "paired": float(excludes_one(plow, phigh).mean())}


# ---------------------------------------------------------------- adaptive stopping


def adaptive_stopping(count: int = DRAWS, cv: float = 0.05, stopping: sequential.Stopping | None = None) -> dict:
    """Runs grown from 3 to `max_repetitions`, a verdict read at each look of the plan's schedule
    (`Stopping.look_points`), the run stopped at the first decision. A/A against a one-sided claim
    ("higher": band [1, ∞)), so every "reproduced" is a false decision: looked at with 95% every time
    (naive) and with the looks' level, and with the looks of half the runs ended by the clock at their
    first, read at 95%; then an A/A "about equal (±5%)" claim at CV 2%: how often it is
    decided each way, and the runs it took."""
    stopping = stopping or sequential.Stopping()
    looks, at = stopping.looks(3), stopping.look_points(3)
    other, base = draws(0.0, stopping.max_repetitions, cv, count, SEED + 50)
    naive, _ = sequential.simulate(other, base, (1.0, math.inf), [core.ALPHA] * looks, looks=at)
    spent, _ = sequential.simulate(other, base, (1.0, math.inf), [stopping.look_alpha(3)] * looks, looks=at)
    fixed, _ = sequential.simulate(other, base, (1.0, math.inf), [core.ALPHA])
    # the clock ends half the runs' looks at their first, read then at 95% (`adaptive.end_looks_out_of_time`):
    # a draw independent of the runs' values, as the time left after a profile is of its verdicts
    ended = np.random.default_rng(SEED + 52).random(count) < 0.5
    clocked = np.where(ended, fixed, spent)
    other, base = draws(0.0, stopping.max_repetitions, 0.02, count, SEED + 51)
    equal, used = sequential.simulate(other, base, (0.95, 1.05), [stopping.look_alpha(3)] * looks, looks=at)
    return {
        "fixed_n3_false": float(np.mean(fixed == REPRODUCED)),
        "naive_false": float(np.mean(naive == REPRODUCED)),
        "spent_false": float(np.mean(spent == REPRODUCED)),
        "clock_ended_false": float(np.mean(clocked == REPRODUCED)),
        "equal_reproduced": float(np.mean(equal == REPRODUCED)),
        "equal_refuted": float(np.mean(equal == NOT_REPRODUCED)),
        "equal_mean_runs": float(used.mean()),
    }


# ---------------------------------------------------------------- claims of many parts

#: parts a claim of "every configuration" has in the kit's claims (one, a few, a sweep, a long sweep)
PART_COUNTS = (1, 4, 8, 15)


def part_verdicts(
    rng: np.random.Generator, truths: np.ndarray, n: int, cv: float, band: core.Band
) -> list[core.Verdict]:
    """One claim's parts, one per truth: n lognormal runs a side each, the Welch interval of the log
    ratio at 95%, and the part's verdict at its own level by the kit's rule (`band_status`), with what
    `combine` reads of it (interval, degrees of freedom, band); no evidence text, for speed."""
    sigma = np.sqrt(np.log1p(cv**2))
    a = np.log(truths)[:, None] + rng.normal(0.0, sigma, (len(truths), n))
    b = rng.normal(0.0, sigma, (len(truths), n))
    va, vb = a.var(axis=1, ddof=1) / n, b.var(axis=1, ddof=1) / n
    df = (va + vb) ** 2 / (va**2 / (n - 1) + vb**2 / (n - 1))
    centre, half = a.mean(axis=1) - b.mean(axis=1), sps.t.ppf(1 - core.ALPHA / 2, df) * np.sqrt(va + vb)
    low, high = np.exp(centre - half), np.exp(centre + half)
    statuses = band_status(low, high, band)
    return [
        core.Verdict(
            str(status), "", math.exp(c), lo, hi, n=n, subject=f"part {i}", scale="ratio", df=float(d), band=band
        )
        for i, (status, c, lo, hi, d) in enumerate(zip(statuses, centre, low, high, df, strict=True))
    ]


def many_parts(
    k: int, truths: tuple[float, ...], count: int, cv: float = 0.05, seed: int = SEED + 60
) -> dict[str, float]:
    """Claims of k parts, "about equal (±5%)" each, the first parts' truths as given and the rest at the
    last: how often they read "not reproduced" and "reproduced" by the kit's rule (`core.combine`, Holm's
    step-down over the parts), and how often some part alone lies outside (the rule without correction).
    Each draw has n runs a side drawn from 3..10, as runs of the kit have."""
    rng = np.random.default_rng(seed + k)
    band = about_equal(0.05)
    values = np.array([truths[min(i, len(truths) - 1)] for i in range(k)])
    refuted = reproduced = uncorrected = every_inside = 0
    for _ in range(count):
        parts = part_verdicts(rng, values, int(rng.integers(3, 11)), cv, band)
        status = core.combine(parts, f"{k} parts").status
        refuted += status == NOT_REPRODUCED
        reproduced += status == REPRODUCED
        uncorrected += any(p.status == NOT_REPRODUCED for p in parts)
        every_inside += all(p.status == REPRODUCED for p in parts)
    return {
        "refuted": refuted / count,
        "reproduced": reproduced / count,
        "uncorrected": uncorrected / count,
        "every_part_inside": every_inside / count,
    }


def parts_table(count: int = 4000) -> pd.DataFrame:
    """Rows: k; columns: the rate of "not reproduced" with the truth on the band's upper edge (every part
    at 1.05), by the rule without correction and with Holm's; of "reproduced" with the truth well inside
    (every part at 1.00, CV 2%); and of "not reproduced" where one part is 15% off (the others at 1.00)."""
    rows = []
    for k in PART_COUNTS:
        edge = many_parts(k, (1.05,), count)
        inside = many_parts(k, (1.00,), count, cv=0.02)
        off = many_parts(k, (1.15, 1.00), count)
        rows.append(
            {
                "k": k,
                "draws": count,
                "edge: not reproduced, no correction": edge["uncorrected"],
                "edge: not reproduced, Holm (≤ 5%)": edge["refuted"],
                "inside CV 2%: every part inside": inside["every_part_inside"],
                "inside CV 2%: reproduced": inside["reproduced"],
                "one part 15% off: not reproduced, no correction": off["uncorrected"],
                "one part 15% off: not reproduced, Holm": off["refuted"],
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the table


def table(count: int = 2000, slow_count: int = 400) -> pd.DataFrame:
    """Rows: case; columns: draws, rate, target. `slow_count` draws for the cases that go through the
    claims' code one run at a time."""
    rows = []

    def add(case: str, draws: int, rate: float, target: str) -> None:
        rows.append({"case": case, "draws": draws, "rate": rate, "target": target})

    aa = aa_at_n3(count)
    add("A/A n=3 CV 5%: Welch interval excludes 1", count, aa["welch_different"], "≤ 5%")
    add("A/A n=3 CV 5%: paired interval excludes 1", count, aa["paired_different"], "≈ 5%")
    add("A/A n=3 CV 5%: 'about equal ±5%' refuted", count, aa["equal_refuted"], "≤ 5%")
    corr = correlated_configurations(count)
    add("4 configurations ρ=0.9, A/A n=3: pooled as independent", count, corr["pooled_different"], "5% (fails)")
    add("4 configurations ρ=0.9, A/A n=3: per run first", count, corr["per_run_different"], "≈ 5%")
    blocked = drift_case("blocked", slow_count)
    add("blocked A/A, drift +18–33%: interval excludes 1 (not looking at order)", slow_count, blocked["excluded"], "—")
    add("blocked A/A, drift +18–33%: flagged, not decided", slow_count, blocked["flagged"], "≈ 100%")
    add("blocked A/A, drift +18–33%: decided 'different'", slow_count, blocked["different"], "≤ 5%")
    steady = drift_case("blocked", slow_count, drift=(0.0, 0.0), seed=SEED + 32)
    add("blocked A/A, no drift: flagged (drift not excluded)", slow_count, steady["flagged"], "— (the cost)")
    inter = drift_case("interleaved", slow_count)
    add("interleaved A/A, drift +18–33%: decided 'different'", slow_count, inter["different"], "≈ 5%")
    add("interleaved A/A, drift +18–33%: paired analysis used", slow_count, inter["paired"], "—")
    still = drift_case("interleaved", slow_count, drift=(0.0, 0.0), seed=SEED + 31)
    add("interleaved A/A, no drift: decided 'different'", slow_count, still["different"], "≤ 5%")
    for n in (3, 5, 10):
        drifting = block_power(count, n, 0.10, 0.05, DRIFT)
        steady = block_power(count, n, 0.10, 0.05, (0.0, 0.0))
        add(f"interleaved 10% effect n={n}, drift: Welch finds it", count, drifting["welch"], "power")
        add(f"interleaved 10% effect n={n}, drift: paired finds it", count, drifting["paired"], "≥ Welch")
        add(f"interleaved 10% effect n={n}, no drift: Welch finds it", count, steady["welch"], "power")
        add(f"interleaved 10% effect n={n}, no drift: paired finds it", count, steady["paired"], "< Welch: Welch kept")
    adaptive = adaptive_stopping(count)
    add("A/A 'higher', fixed n=3 at 95%: reproduced (false)", count, adaptive["fixed_n3_false"], "≤ 2.5%")
    schedule = sequential.Stopping().look_points(3)
    grown, looks = f"runs {'/'.join(map(str, schedule))}", f"α/{len(schedule)}"
    add(f"A/A 'higher', {grown}, every look at 95%: reproduced (false)", count, adaptive["naive_false"], "2.5% (fails)")
    add(f"A/A 'higher', {grown}, looks at {looks}: reproduced (false)", count, adaptive["spent_false"], "≤ 2.5%")
    add(
        f"A/A 'higher', {grown} at {looks}, half ended at 3 by the clock (95%): reproduced (false)",
        count,
        adaptive["clock_ended_false"],
        "≤ 2.5%",
    )
    add(f"A/A 'about equal ±5%' CV 2%, {grown} at {looks}: reproduced", count, adaptive["equal_reproduced"], "power")
    add(f"A/A 'about equal ±5%' CV 2%, {grown} at {looks}: refuted", count, adaptive["equal_refuted"], "≤ 5%")
    add(f"A/A 'about equal ±5%' CV 2%, {grown}: mean runs a side", count, adaptive["equal_mean_runs"], "—")
    return pd.DataFrame(rows)


#: the duet case: the host's capacity moving from duet to duet (both sides at once), a CPU half faster than
#: the other (swapped every repetition) and each side's own noise, as measured on this kind of machine
DUET_HOST_CV, DUET_HALF_EFFECT, DUET_SIDE_CV = 0.20, 0.05, 0.035


def duet_draws(count: int, n: int, effect: float = 0.0, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Values of two sides in n duets per draw: a capacity common to both sides of a duet, the half each
    side ran on (the baseline's alternates with the repetition) and each side's own noise."""
    rng = np.random.default_rng(seed)
    host = np.exp(rng.normal(0.0, DUET_HOST_CV, size=(count, n)))
    half = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) * DUET_HALF_EFFECT / 2
    side = np.exp(rng.normal(0.0, DUET_SIDE_CV, size=(count, n, 2)))
    baseline = host * np.exp(half) * side[..., 0]
    other = host * np.exp(-half) * side[..., 1] * (1.0 + effect)
    return other, baseline


def duet_aa(count: int = DRAWS, sizes: tuple[int, ...] = (3, 5, 8, 13, 21)) -> pd.DataFrame:
    """An A/A duet at n duets: how often the within-duet paired t (one sample per duet) decides 'different'
    (its 95% interval excludes 1), beside Welch's t on the same values read one at a time (the host's
    movement then lands in each side's spread); and the power at a real 5% effect. The first size also
    through the claims' own code (`core.effect_between` on duet records), to check the path."""
    rows = []
    for n in sizes:
        other, baseline = duet_draws(count, n)
        _, low, high = paired_log_intervals(other, baseline)
        _, wlow, whigh = welch_log_intervals(other, baseline)
        moved, base = duet_draws(count, n, effect=0.05, seed=SEED + 1)
        _, plow, phigh = paired_log_intervals(moved, base)
        _, qlow, qhigh = welch_log_intervals(moved, base)
        rows.append(
            {
                "duets": n,
                "A/A different (duet)": float(excludes_one(low, high).mean()),
                "A/A different (one at a time)": float(excludes_one(wlow, whigh).mean()),
                "5% effect found (duet)": float(excludes_one(plow, phigh).mean()),
                "5% effect found (one at a time)": float(excludes_one(qlow, qhigh).mean()),
            }
        )
    other, baseline = duet_draws(200, sizes[0], seed=SEED + 2)
    through_code = np.mean([_decided_different(o, b) for o, b in zip(other, baseline, strict=True)])
    rows[0]["A/A different via core.effect_between"] = float(through_code)
    return pd.DataFrame(rows)


def _decided_different(other: np.ndarray, baseline: np.ndarray) -> bool:
    """Whether the claims' code, on duet records of these values, puts the interval beside 1."""
    records = []
    for rep, (a, b) in enumerate(zip(other, baseline, strict=True)):
        duet = f"r{rep}~native+replica"
        for position, (env, value) in enumerate((("native", b), ("native+replica", a))):
            records.append(
                {
                    **_record(env, float(value), rep, 2 * rep + position),
                    "workload": "linpack",  # a workload whose spec takes the duet design
                    "order": "duet",
                    "duet": duet,
                    "duet_partner": "native+replica" if env == "native" else "native",
                }
            )
    effect = core.effect_between(pd.DataFrame(records), "native+replica", "native")
    return bool(excludes_one(np.array([effect.low]), np.array([effect.high]))[0])


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value:.4f}")
    print("n = 3, CV 5%, 10% effect:", f"{figures(n=3)['power_10pct_n10']:.4f}")
    print()
    shown = table()
    shown["rate"] = [
        f"{r:.2f}" if "mean runs" in c else f"{r:.1%}" for c, r in zip(shown["case"], shown["rate"], strict=True)
    ]
    print(shown.to_string(index=False))
    print()
    print("claims of k parts, 'about equal (±5%)' each, n = 3..10 runs a side, lognormal CV 5% (inside: 2%):")
    parts = parts_table()
    print(parts.to_string(index=False, formatters={c: "{:.1%}".format for c in parts.columns[2:]}))
    print()
    print(
        f"duets: host capacity CV {DUET_HOST_CV:.0%} per duet, a CPU half {DUET_HALF_EFFECT:.0%} faster (swapped "
        f"every repetition), each side CV {DUET_SIDE_CV:.1%}:"
    )
    duets = duet_aa()
    print(duets.to_string(index=False, formatters={c: "{:.1%}".format for c in duets.columns[1:]}, na_rep=""))
