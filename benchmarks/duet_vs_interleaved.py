"""The duet design against the interleaved one, on this machine, in one run: for each workload the spread
of the Docker/native ratio under each design and the repetitions an "about equal (±5%)" claim needs.

Both designs are run by the kit itself (`kit run`'s machinery, real tools, real Docker), alternated
workload by workload and design by design (A B A B), so that a noisy period falls on both. Interleaved:
each repetition runs native and Docker one after the other on the whole machine, the ratio is taken
within the repetition. Duet: both at once on one half of the CPUs each, the halves swapped every
repetition, the ratio taken within the duet; its A/A duet (native beside native+replica) is printed too.

    PYTHONPATH=$PWD python benchmarks/duet_vs_interleaved.py [--repetitions 10] [--rounds 2]
        [--runs pxz,linpack] [--keep DIR]

Columns: the ratio's geometric mean, its CV (the SD of the log ratios, in %), each side's own CV over
the repetitions, and the repetitions a side (pairs for the duet) that would give 80% power to find an
"about equal (±5%)" claim reproduced at the measured ratio and spread (`stats.runs_for_power`; the
interleaved design's claim is decided by Welch's t on the repetitions, the duet's by the paired t).
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import kitlib
from kitlib.analyse import design_spread
from kitlib.core import stats
from kitlib.measure.run.runner import run_plan

#: the runs and the workloads each measures, at sizes that keep one point to seconds on 2 cores; STREAM is
#: not measured in duets (its spec says why), and with it neither is the memory experiment
RUNS = {
    "pxz": ("cpu", {"workloads": ["pxz"], "corpus_mb": 12}, ("pxz",)),
    "linpack": ("cpu", {"workloads": ["linpack"], "linpack_n": 3000, "linpack_trials": 3}, ("linpack",)),
}
WORKLOADS = [w for _, _, measured in RUNS.values() for w in measured]
HEADLINE = design_spread.HEADLINE
BAND = math.log(1.05)
PAIR = ("docker-host-volume", "native")


def run_design(run: str, order: str, repetitions: int, seed: int, root: Path) -> pd.DataFrame:
    """One design's run; its records of each workload's headline metric (every point, disturbed or not: the
    design decides; the whole system's variant where a program reports several)."""
    experiment, params, measured = RUNS[run]
    plan = kitlib.plan(
        experiment, environments=list(PAIR[::-1]), order=order, repetitions=repetitions, seed=seed, **params
    )
    rows = run_plan(plan, results_root=root, progress=sys.stderr.isatty()).records
    return pd.concat([design_spread.headline(rows, workload) for workload in measured], ignore_index=True)


def log_ratios(rows: pd.DataFrame, env: str, baseline: str) -> tuple[np.ndarray, pd.Series, pd.Series]:
    """(log ratios within each block, the side's values per block, the baseline's): `design_spread`'s blocks."""
    d = design_spread.log_ratios(rows, env, baseline)
    duets = "duet" in rows.columns and rows["duet"].notna().all()
    block = rows["run_id"].astype(str) + " | " + rows["duet" if duets else "repetition"].astype(str)
    logs = np.log(rows["value"].astype(float))
    side = np.exp(logs[rows["env"] == env].groupby(block[rows["env"] == env]).mean())
    base = np.exp(logs[rows["env"] == baseline].groupby(block[rows["env"] == baseline]).mean())
    return d, side, base


def cv_pct(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(100 * values.std(ddof=1) / values.mean()) if len(values) > 1 else math.nan


def row_of(workload: str, design: str, rows: pd.DataFrame, env: str, baseline: str) -> dict:
    d, side, base = log_ratios(rows, env, baseline)
    sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
    distance = BAND - abs(float(d.mean())) if len(d) else math.nan
    if not len(d) or not math.isfinite(sd) or distance <= 0:
        needed = None
    elif design == "duet":
        needed = stats.runs_for_power(sd, distance, paired=True)
    else:  # Welch on the repetitions: each side's spread of its log values
        spread = float(np.sqrt((np.log(side).var(ddof=1) + np.log(base).var(ddof=1)) / 2))
        needed = stats.runs_for_power(spread, distance, paired=False)
    return {
        "workload": workload,
        "design": design,
        "comparison": f"{env} / {baseline}",
        "n": len(d),
        "ratio": float(np.exp(d.mean())) if len(d) else math.nan,
        "ratio_cv_pct": 100 * sd,
        "side_cv_pct": cv_pct(side),
        "baseline_cv_pct": cv_pct(base),
        "needed_for_5pct": needed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1, help="A B rounds per workload (each adds a run of each)")
    parser.add_argument("--runs", default=",".join(RUNS), help=f"of {', '.join(RUNS)}")
    parser.add_argument(
        "--keep",
        default=None,
        help="keep the runs' folders here (default: a temporary one); the results folder (results/) lets "
        "`kit reproduce` choose each experiment's design from them",
    )
    args = parser.parse_args(argv)
    chosen = [w.strip() for w in args.runs.split(",") if w.strip()]
    unknown = [w for w in chosen if w not in RUNS]
    if unknown or args.repetitions < 3 or args.rounds < 1:
        parser.error(f"runs from {', '.join(RUNS)}; repetitions at least 3; rounds at least 1")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kit-duet-bench-"))
    started = time.monotonic()
    rows = []
    try:
        for run in chosen:
            runs: dict[str, list[pd.DataFrame]] = {"interleaved": [], "duet": []}
            for round_ in range(args.rounds):
                designs = ("interleaved", "duet") if round_ % 2 == 0 else ("duet", "interleaved")
                for design in designs:
                    runs[design].append(run_design(run, design, args.repetitions, 1000 + round_, root))
            for workload in RUNS[run][2]:
                for design, frames in runs.items():
                    found = pd.concat(frames, ignore_index=True)
                    found = found[found["workload"] == workload]
                    rows.append(row_of(workload, design, found, *PAIR))
                    if design == "duet":
                        rows.append(row_of(workload, "duet A/A", found, "native+replica", "native"))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    table = pd.DataFrame(rows)
    minutes = (time.monotonic() - started) / 60
    print(f"\n{args.repetitions} repetitions a design, {args.rounds} round(s), {minutes:.1f} min")
    print(table.to_markdown(index=False, floatfmt=".3g") if _has_tabulate() else table.to_string(index=False))
    return 0


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
