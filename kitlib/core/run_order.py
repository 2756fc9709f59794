"""How the runs behind a comparison were ordered, read from the records themselves.

Duet: the two sides of each comparison ran at once, each duet its own block (its id in `duet`).
Interleaved (the kit's default): every repetition runs each environment once, so the repetitions
occupy consecutive stretches of positions; the repetition is then a block, and two environments'
runs of one repetition were measured close together. Blocked: all of one environment, then the next;
a drift of the machine over the run then reads as a difference between the environments. The
positions decide; records made before the kit recorded positions ran blocked (their plan names no
order: the kit knew no other then, and `results.load_records` says `blocked` in their `order`), and
their drift cannot be tested.
"""

from __future__ import annotations

import pandas as pd

INTERLEAVED, BLOCKED, UNRECORDED = "interleaved", "blocked", "blocked, positions not recorded"
#: both sides of each comparison measured at once (`kitlib.measure.run.duet`): the duet is the block
DUET = "duet"
#: below this share of a duet side's measuring time run beside its partner, its ratio partly compares a side
#: alone with a side in company: the evidence says how many such sides a comparison holds
DUET_LOW_OVERLAP = 0.8
OTHER, SINGLE = "neither interleaved nor blocked", "one repetition"
#: orders in which a drift of the machine can read as a difference between environments
CONFOUNDED = (BLOCKED, OTHER, UNRECORDED)


def order_of(rows: pd.DataFrame) -> str:
    """The order the records' runs were made in: blocked if any run was (each environment's positions
    one stretch, or a plan from before positions were recorded), interleaved when every run's
    repetitions follow one another in position, `one repetition` when nothing tells."""
    if rows.empty or "repetition" not in rows.columns:
        return SINGLE
    runs = rows.groupby("run_id", dropna=False) if "run_id" in rows.columns else [("", rows)]
    orders = {_order_of_run(part) for _, part in runs}
    for order in (BLOCKED, UNRECORDED, OTHER, DUET, INTERLEAVED):
        if order in orders:
            return order
    return SINGLE


def _order_of_run(run: pd.DataFrame) -> str:
    planned = set(run["order"].dropna().astype(str)) if "order" in run.columns else set()
    if DUET in planned and "duet" in run.columns and run["duet"].notna().any():
        return DUET
    if "position" not in run.columns or run["position"].isna().any():
        return UNRECORDED if BLOCKED in planned else SINGLE
    reps = run.groupby("repetition")["position"].agg(["min", "max"]).sort_index()
    envs = run.groupby("env")["position"].agg(["min", "max"]).sort_values("min")
    if len(reps) < 2:
        return SINGLE
    by_repetition = bool((reps["max"].to_numpy()[:-1] < reps["min"].to_numpy()[1:]).all())
    by_environment = len(envs) > 1 and bool((envs["max"].to_numpy()[:-1] < envs["min"].to_numpy()[1:]).all())
    if by_environment:
        return BLOCKED
    return INTERLEAVED if by_repetition else OTHER
