"""The verdict rule follows how the records were made (synthetic records with a known truth): runs
aggregated over their configurations before they are combined, the repetition as a block where an
interleaved run drifts, no decision from a blocked run the drift test cannot clear, and the runs that
would decide sized for 80% power with t quantiles."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from kitlib.analyse.claims import core
from kitlib.core import drift, run_order, stats


def _record(env: str, value: float, repetition: int, position: int | None, **config) -> dict:
    row = {
        "experiment": "memory",
        "workload": "stream",
        "metric": "bandwidth",
        "env": env,
        "value": value,
        "unit": "GB/s",
        "run_id": "r",
        "repetition": repetition,
        **config,
    }
    if position is not None:
        row["position"] = position
    return row


def _stream_like(seed: int = 1) -> pd.DataFrame:
    """Four kernels from one process per run, 3 interleaved runs a side, a run's kernels moving together."""
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(3):
        for k, env in enumerate(("docker-host-volume", "native")):
            shared = rng.lognormal(0, 0.1)
            for kernel, level in (("Copy", 20.0), ("Scale", 21.0), ("Add", 24.0), ("Triad", 25.0)):
                value = level * shared * rng.lognormal(0, 0.01)
                rows.append(_record(env, value, rep, 2 * rep + k, kernel=kernel))
    return pd.DataFrame(rows)


def test_configurations_of_one_run_are_aggregated_before_they_are_combined():
    rows = _stream_like()
    found = core.effect_between(rows, "docker-host-volume", "native")
    runs = {
        env: np.exp(np.log(rows[rows["env"] == env].groupby("repetition")["value"].apply(np.array).tolist()).mean(1))
        for env in ("docker-host-volume", "native")
    }
    ratio, low, high, _, _ = stats.log_ratio_interval(runs["docker-host-volume"], runs["native"])
    assert found.n == 3 and "geometric mean of the 4 configurations of each run" in found.how
    assert np.allclose([found.value, found.low, found.high], [ratio, low, high])
    # combined as if the four kernels were independent, the interval would be far narrower than the runs allow
    assert found.high - found.low > 0.1


def test_each_kernel_decided_by_itself_says_they_are_not_independent():
    rows = _stream_like()
    verdict = core.compare("memory", "bandwidth", core.exact("docker-host-volume"), "native", core.EQUAL)(rows)
    assert "4 comparisons (every configuration)" in verdict.reason
    assert "correlated, not independent evidence" in verdict.reason


def _interleaved(seed: int, drift_total: float, effect: float = 0.0, reps: int = 5, points: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows, position = [], 0
    last = reps * 2 * points - 1
    for rep in range(reps):
        envs = ["native+replica", "native"] if rep % 2 else ["native", "native+replica"]
        for env in envs:
            for p in range(points):
                level = 100 * (1 + p) * (1 + drift_total * position / last) * (1 + effect if env != "native" else 1)
                rows.append(_record(env, level * rng.lognormal(0, 0.03), rep, position, clients=p))
                position += 1
    return pd.DataFrame(rows)


def test_an_interleaved_run_that_drifts_is_analysed_in_pairs_within_each_repetition():
    run = _interleaved(3, 0.30)
    assert run_order.order_of(run) == run_order.INTERLEAVED and drift.flagged(run)
    part = run[run["clients"] == 0]
    found = core.effect_between(part, "native+replica", "native", context=run)
    assert found.paired and "paired t on log values within each repetition" in found.how
    a = np.log(part[part["env"] == "native+replica"].sort_values("repetition")["value"].to_numpy())
    b = np.log(part[part["env"] == "native"].sort_values("repetition")["value"].to_numpy())
    d = a - b
    half = sps.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert np.isclose(found.low, math.exp(d.mean() - half)) and found.df == len(d) - 1
    steady = _interleaved(3, 0.0)
    quiet = core.effect_between(steady[steady["clients"] == 0], "native+replica", "native", context=steady)
    assert not quiet.paired and "Welch t on log values (interleaved, no trend" in quiet.how


def _blocked(seed: int, drift_total: float, reps: int = 3, points: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    units = [(env, p, r) for env in ("native+replica", "native") for p in range(points) for r in range(reps)]
    last = len(units) - 1
    rows = [
        _record(env, 100 * (1 + p) * (1 + drift_total * i / last) * rng.lognormal(0, 0.03), r, i, clients=p)
        for i, (env, p, r) in enumerate(units)
    ]
    return pd.DataFrame(rows)


def test_a_blocked_run_the_drift_test_cannot_clear_is_not_decided():
    run = _blocked(4, 0.30)
    assert run_order.order_of(run) == run_order.BLOCKED
    found = core.effect_between(run[run["clients"] == 0], "native+replica", "native", context=run)
    assert found.high < 1  # the drift reads as a loss of the environment that ran first
    verdict = core.decide(found, core.EQUAL, "A/A")
    assert verdict.status == core.INCONCLUSIVE
    assert "not decided: the runs were blocked and the drift test does not clear them" in verdict.reason


def test_a_blocked_run_without_positions_is_not_decided_and_one_without_an_order_is():
    run = _blocked(5, 0.0).drop(columns=["position"])
    unknown = core.effect_between(run[run["clients"] == 0], "native+replica", "native")
    assert run_order.order_of(run) == run_order.SINGLE and not unknown.undecided
    legacy = run.assign(order="blocked")
    assert run_order.order_of(legacy) == run_order.UNRECORDED
    found = core.effect_between(legacy[legacy["clients"] == 0], "native+replica", "native")
    assert "no positions recorded" in found.undecided


def test_the_drift_test_finds_a_trend_inside_the_blocks_of_a_blocked_run():
    """Every configuration centred on its own mean position: the blocks' positions add nothing."""
    rows = []
    for i, env in enumerate(("a", "b")):
        for r in range(8):
            position = 8 * i + r
            rows.append(_record(env, 100 * (1 + 0.02 * r), r, position, clients=0))
    table = drift.drift_table(pd.DataFrame(rows).assign(host="h"))
    assert bool(table["drift"].iloc[0]) and math.isclose(table["change"].iloc[0], 0.02 * 15 / 1.07, rel_tol=0.1)


def test_runs_for_power_uses_the_t_quantile_at_that_n():
    sd, distance = 0.05, 0.05
    n = stats.runs_for_power(sd, distance)
    t = sps.t
    assert (t.ppf(0.975, 2 * n - 2) + t.ppf(0.8, 2 * n - 2)) * sd * math.sqrt(2 / n) <= distance
    m = n - 1
    assert (t.ppf(0.975, 2 * m - 2) + t.ppf(0.8, 2 * m - 2)) * sd * math.sqrt(2 / m) > distance
    normal = math.ceil(((1.959964 + 0.841621) * sd / distance) ** 2 * 2)
    assert n > normal  # the normal quantiles promise too few runs at small n
    # simulated: at n runs a side, a true effect `distance` from the edge is decided about 80% of the time
    rng = np.random.default_rng(7)
    a = np.exp(rng.normal(distance, sd, (4000, n)))
    b = np.exp(rng.normal(0.0, sd, (4000, n)))
    _, low, _ = stats.welch_log_intervals(a, b)
    assert 0.75 <= np.mean(low > 1) <= 0.9
    assert stats.runs_for_power(0.1, 0.05, paired=True) < stats.runs_for_power(0.1, 0.05)


def test_the_evidence_asks_for_runs_at_80_percent_power():
    effect = core.Effect(1.02, 0.97, 1.07, 0.3, 3, "one configuration, Welch t on log values", "ratio", df=4.0)
    needed, text = core.repetitions_to_decide(effect, core.EQUAL)
    assert "(80% power)" in text and text.startswith(f"about {needed} runs a side")
    wider = core.Effect(1.02, 0.95, 1.09, 0.3, 3, "one configuration, Welch t on log values", "ratio", 4.0, alpha=0.01)
    assert core.repetitions_to_decide(wider, core.EQUAL)[0] >= needed, "a sequential level asks for as many or more"
