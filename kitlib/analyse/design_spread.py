"""Which design measures a comparison more tightly on this host: the spread of one environment's log
ratio to native within each block, in duets (the block: the duet) and one at a time (the block: the
repetition), read from this host's own records.

Why: a duet cancels what moves both sides at once (steal, the host's clock, a neighbour's memory traffic
on both CPUs), but not what moves one CPU and not the other: where the host gives a guest's two CPUs
unequal and changing capacity, the within-duet ratio carries that instead. The design that reads the
smaller spread on this host's records is the one its claims are decided sooner by (`kit reproduce` uses
it per experiment; `benchmarks/duet_vs_interleaved.py` prints the same figures from runs of its own).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: the metric each workload's claims read, and the rows of it that stand for the whole system
HEADLINE = {"pxz": "throughput", "linpack": "gflops", "stream": "bandwidth", "randomaccess": "gups"}
#: blocks a design needs before its spread counts
MIN_BLOCKS = 3


def log_ratios(rows: pd.DataFrame, env: str, baseline: str) -> np.ndarray:
    """`env`'s log ratio to `baseline` within each block (a run's duet, or a run's repetition), several
    configurations of a block (STREAM's kernels) by their geometric mean."""
    if rows.empty:
        return np.array([])
    duets = "duet" in rows.columns and rows["duet"].notna().all()
    block = rows["run_id"].astype(str) + " | " + rows["duet" if duets else "repetition"].astype(str)
    logs = np.log(rows["value"].astype(float))
    side = logs[rows["env"] == env].groupby(block[rows["env"] == env]).mean()
    base = logs[rows["env"] == baseline].groupby(block[rows["env"] == baseline]).mean()
    common = side.index.intersection(base.index)
    return (side[common] - base[common]).to_numpy()


def headline(rows: pd.DataFrame, workload: str) -> pd.DataFrame:
    """A workload's rows of its headline metric, the whole system's variant where several are reported."""
    part = rows[(rows["workload"] == workload) & (rows["metric"] == HEADLINE.get(workload, ""))]
    if "variant" in part.columns:
        part = part[part["variant"].isna() | (part["variant"] == "System")]
    return part


def spreads(records: pd.DataFrame, env: str = "docker-host-volume", baseline: str = "native") -> pd.DataFrame:
    """Per workload: the SD of `env`'s within-block log ratio to `baseline` in duets and one at a time,
    with the blocks each rests on (NaN where a design has fewer than MIN_BLOCKS)."""
    rows = []
    if records.empty or "workload" not in records.columns:
        return pd.DataFrame(columns=["workload", "duet_sd", "duet_blocks", "one_at_a_time_sd", "one_at_a_time_blocks"])
    in_duets = records["duet"].notna() if "duet" in records.columns else pd.Series(False, index=records.index)
    for workload in sorted(set(records["workload"].dropna()) & set(HEADLINE)):
        found = {}
        for design, part in (("duet", records[in_duets]), ("one_at_a_time", records[~in_duets])):
            d = log_ratios(headline(part, workload), env, baseline)
            found[f"{design}_sd"] = float(d.std(ddof=1)) if len(d) >= MIN_BLOCKS else math.nan
            found[f"{design}_blocks"] = len(d)
        rows.append({"workload": workload, **found})
    return pd.DataFrame(rows)


def duet_loses(records: pd.DataFrame) -> list[str]:
    """The workloads whose within-duet spread on these records is wider than one at a time's, each said
    with both figures: where either design lacks the blocks, nothing is said."""
    table = spreads(records)
    worse = table[(table["duet_sd"] > table["one_at_a_time_sd"])]
    return [
        f"{row.workload}: ratio spread {100 * row.duet_sd:.1f}% in {row.duet_blocks} duets against "
        f"{100 * row.one_at_a_time_sd:.1f}% in {row.one_at_a_time_blocks} repetitions one at a time"
        for row in worse.itertuples()
    ]
