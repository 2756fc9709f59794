"""Time to a verdict: claims decided per hour of machine time, runs added until decided against the
paper's fixed design (ten runs a side, decided once at 95%), and the false decisions adaptive stopping
costs.

1. Noise: the run-to-run CV of every series of data/sample's main host (host, experiment, workload,
   environment, metric and configuration; the CV of its per-repetition means), by experiment; then of
   the series the claims compare there, whose quantiles the simulation draws at (a host's series also
   hold figures no claim reads and that barely move: a closed loop's think-time-bound throughput).
2. Simulated claims, shaped as three of the kit's own (their bands are the claims' bands): "about
   equal (±5%)" with a true ratio of 1, a stated 0.78× (±25% of the effect) with a true 0.78, and a
   bound "at least 10% lower" with a true 0.80; runs drawn lognormal at the measured CV quantiles. Each
   design reads the same draws: the paper's fixed 10 runs at 95%; 3 runs looked at once, at 95% (a
   budget the profile fills, whose looks the kit cuts to one) and at α/5 (the whole schedule's first
   look, what such a run cost before the cut); and `--until-decided` from 3 runs to
   8 or 21 (the default), on its schedule of looks, each look at α/K, a claim left where 80% power would need
   more runs than the limit (as the kit leaves it) or grown to the limit regardless ("to the end").
   Claims decided per hour = share decided ÷ (mean runs a side × minutes one repetition of both sides
   takes); a claim is simulated alone, where the kit's repetition serves every claim of its run.
3. Simulated A/A (true ratio 1): how often adaptive stopping decides the wrong way, a "higher" claim
   reproduced, an interval excluding 1 ("different"), an "about equal" claim refuted: every look at
   95% (naive) beside the looks' level α/K. Without the give-up rule: the bound must hold however the
   run stops.
4. `--real` (root, about a minute an experiment): `kit run EXPERIMENT --env native --env native+replica
   --profile quick --no-notebook` in a fresh results folder, then the replica ÷ original intervals of
   every configuration (`kitlib.analyse.replicas.aa_table`): how many exclude 1 (about 5% expected), how many
   the kit's equality band decides "different" (none may be), and decisions per hour of the run.

Run from the project root:
    PYTHONPATH=$PWD python benchmarks/time_to_verdict.py [--quick] [--minutes-per-repetition 0.5]
    PYTHONPATH=$PWD python benchmarks/time_to_verdict.py --real [--experiments redis,net,cpu,memory] [--results DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kitlib.analyse import analysis, replicas
from kitlib.analyse.claims import CLAIMS, core, verdicts
from kitlib.core import sequential, timing
from kitlib.core.paths import PROJECT_ROOT
from kitlib.results import load_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import SEED, draws  # noqa: E402  (the sibling benchmark's lognormal draws)

SAMPLE = PROJECT_ROOT / "data" / "sample"
#: minutes one quick-profile repetition of a claim's two environments takes on the 2-core machine of the
#: README's timing table: cpu 85 s for 3 repetitions of 2 environments (28 s), redis 132 s and net 163 s
#: for 3 of 3 (29 s and 36 s for two of them)
MINUTES_PER_REPETITION = 0.5
#: the paper's design: "Each data point is the arithmetic mean obtained from ten runs"
PAPER_RUNS = 10
CV_QUANTILES = (0.05, 0.10, 0.25, 0.50)
REAL_EXPERIMENTS = ("redis", "net", "cpu", "memory")


@dataclass(frozen=True)
class Shape:
    """A claim's band and the truth a simulated run of it is drawn around."""

    claim: str
    band: core.Band
    truth: float


SHAPES = (
    Shape("docker_near_native_pxz", core.EQUAL, 1.0),
    Shape("kvm_pxz_loss", core.stated_ratio(0.78), 0.78),
    Shape("kvm_untuned_linpack_loss", core.large_lower(), 0.80),
)


def band_of(claim: str) -> str:
    """The band a claim lists (`kit claims --list`), to hold the shapes to the claims they stand for."""
    return next(c.band for c in CLAIMS if c.name == claim)


# ---------------------------------------------------------------- noise


def run_to_run_cvs(records: pd.DataFrame) -> pd.DataFrame:
    """One row per series (the configuration columns of `analysis.dimensions`, host first): its runs, the
    mean and the CV of its per-repetition means. Series of fewer than 2 runs, with a value ≤ 0 (counters,
    offsets) or no spread at all (a count, a hit rate of 100%) say nothing about noise and are left out."""
    by = analysis.dimensions(records)
    runs = records.groupby([*by, "run_id", "repetition"], sort=False, dropna=False)["value"].mean()
    series = runs.groupby(level=list(range(len(by))), sort=False, dropna=False)
    table = pd.DataFrame(
        {"runs": series.size(), "mean": series.mean(), "cv": series.std(ddof=1) / series.mean(), "lowest": series.min()}
    ).reset_index()
    kept = (table["runs"] >= 2) & (table["lowest"] > 0) & (table["cv"] > 0)
    return table.loc[kept, [*by, "runs", "mean", "cv"]].reset_index(drop=True)


def noise_by_experiment(
    cvs: pd.DataFrame, quantiles: tuple[float, ...] = (0.05, 0.10, 0.25, 0.50, 0.75, 0.90)
) -> pd.DataFrame:
    """Per experiment (and over all): how many series, and quantiles of their CVs."""
    rows = [("all", cvs["cv"])] + [(name, part["cv"]) for name, part in cvs.groupby("experiment")]
    return pd.DataFrame(
        [
            {"experiment": name, "series": len(cv), **{f"q{round(100 * q)}": cv.quantile(q) for q in quantiles}}
            for name, cv in rows
        ]
    )


def main_host_cvs(sample: Path = SAMPLE) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """The sample's main host (the one with the most records), the CVs of its series, and its records."""
    records = load_records(sample)
    host = str(records["host"].value_counts().idxmax())
    mine = records[records["host"].astype(str) == host]
    return host, run_to_run_cvs(mine), mine


def compared_by_claims(records: pd.DataFrame) -> pd.DataFrame:
    """(experiment, metric, env, workload) of every series a claim's one-interval verdict compared on
    these records: the noise that decides claims, where a host's series also hold figures no claim
    reads (a closed loop's think-time-bound throughput, a point's own duration)."""
    rows = set()
    for _, _, verdict in verdicts(records):
        for leaf in verdict.leaves():
            if leaf.experiment:
                rows |= {(leaf.experiment, leaf.metric, env, w) for env in leaf.envs for w in leaf.workloads}
    return pd.DataFrame(sorted(rows), columns=["experiment", "metric", "env", "workload"])


def claim_series_cvs(cvs: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """The rows of `cvs` (`run_to_run_cvs`) that claims compare on `records`."""
    compared = compared_by_claims(records)
    keys = ["experiment", "metric", "env", "workload"]
    table = cvs.astype({k: str for k in keys})
    return table.merge(compared, on=keys, how="inner").reset_index(drop=True)


# ---------------------------------------------------------------- time to a verdict, simulated


def decided_per_hour(decided: float, runs_a_side: float, minutes_per_repetition: float) -> float:
    """Claims decided per hour of machine time: a claim costs `runs_a_side` repetitions (one repetition
    measures each side once) of `minutes_per_repetition`, and is decided with probability `decided`."""
    return 60.0 * decided / (runs_a_side * minutes_per_repetition)


PAPER = f"fixed {PAPER_RUNS} (paper)"


#: the runs a side a run may grow to: 8, and the kit's default (looks at 3, 5, 8, 13, 21)
LIMITS = (8, sequential.Stopping().max_repetitions)


def designs(limits: tuple[int, ...] = LIMITS) -> dict[str, dict]:
    """The designs compared: name → arguments of `sequential.simulate` beyond the draws. Grown from 3
    runs to each limit as the kit grows them, looked at on its schedule (`Stopping.look_points`; a claim
    left where 80% power would need more runs than the limit), and grown to the limit without leaving
    any, to show what that rule costs."""
    found = {PAPER: {"runs": PAPER_RUNS, "alphas": [core.ALPHA], "start": PAPER_RUNS}}
    # no time to grow (the profile fills the budget): one look at 95%, as the kit now plans it, against
    # the first look of the whole schedule, as it planned it before cutting the looks to the budget
    uncut = sequential.Stopping().looks(core.MIN_RUNS)
    found["3 once at α (cut)"] = {"runs": core.MIN_RUNS, "alphas": [core.ALPHA], "start": core.MIN_RUNS}
    found[f"3 once at α/{uncut} (uncut)"] = {
        "runs": core.MIN_RUNS,
        "alphas": [core.ALPHA / uncut],
        "start": core.MIN_RUNS,
    }
    for limit in limits:
        stopping = sequential.Stopping(max_repetitions=limit)
        looks = stopping.looks(core.MIN_RUNS)
        for name, give_up in (("kit", limit), ("to the end", None)):
            found[f"3→{limit} α/{looks} {name}"] = {
                "runs": limit,
                "alphas": [stopping.look_alpha(core.MIN_RUNS)] * looks,
                "start": core.MIN_RUNS,
                "give_up_beyond": give_up,
                "looks": stopping.look_points(core.MIN_RUNS),
            }
    return found


def time_to_verdict(count: int, cv_levels: dict[str, float], minutes: float) -> pd.DataFrame:
    """Each shape × CV level × design: share decided, share decided the wrong way, mean runs a side,
    claims decided per hour, and that rate over the paper's fixed design's."""
    rows = []
    for s, shape in enumerate(SHAPES):
        wrong = core.NOT_REPRODUCED  # every shape's truth lies inside its band
        for c, (level, cv) in enumerate(cv_levels.items()):
            other, base = draws(shape.truth - 1, max(PAPER_RUNS, *LIMITS), cv, count, SEED + 100 + 10 * s + c)
            for name, design in designs().items():
                runs = design["runs"]
                status, used = sequential.simulate(
                    other[:, :runs],
                    base[:, :runs],
                    (shape.band.low, shape.band.high),
                    design["alphas"],
                    design["start"],
                    design.get("give_up_beyond"),
                    design.get("looks"),
                )
                decided = float(np.mean(status != core.INCONCLUSIVE))
                rows.append(
                    {
                        "claim shape": f"{shape.claim} (true {shape.truth:g})",
                        "CV": f"{cv:.1%} ({level})",
                        "design": name,
                        "decided": decided,
                        "wrong": float(np.mean(status == wrong)),
                        "runs": float(used.mean()),
                        "per_hour": decided_per_hour(decided, float(used.mean()), minutes),
                    }
                )
    table = pd.DataFrame(rows)
    paper = table.groupby(["claim shape", "CV"], sort=False)
    table["vs paper"] = table["per_hour"] / paper["per_hour"].transform("first")
    #: a ratio over a design that decides almost nothing is noise, not a speed-up
    table.loc[paper["decided"].transform("first") < 0.05, "vs paper"] = np.nan
    return table


def side_by_side(table: pd.DataFrame, cell) -> pd.DataFrame:
    """One row per claim shape and CV, one column per design, each cell `cell(row)` as text."""
    shown = table.assign(cell=[cell(row) for _, row in table.iterrows()])
    wide = shown.pivot_table(index=["claim shape", "CV"], columns="design", values="cell", aggfunc="first", sort=False)
    return wide[list(dict.fromkeys(table["design"]))].reset_index().rename_axis(columns=None)


# ---------------------------------------------------------------- A/A under adaptive stopping, simulated

#: A/A claims and the verdict that is a false decision for each (a band [1, 1] is "not reproduced"
#: exactly where the interval excludes 1: decided "different")
AA_CASES = (
    ("'higher' reproduced", (1.0, math.inf), core.REPRODUCED, "≤ 2.5%"),
    ("'different' (interval excludes 1)", (1.0, 1.0), core.NOT_REPRODUCED, "≤ 5%"),
    ("'about equal ±5%' refuted", (core.EQUAL.low, core.EQUAL.high), core.NOT_REPRODUCED, "≤ 5%"),
)


def aa_false_decisions(count: int, cv_levels: dict[str, float], limits: tuple[int, ...] = LIMITS) -> pd.DataFrame:
    """True ratio 1: the share of runs decided the wrong way, per case and CV level, under the paper's
    fixed 10, and grown from 3 runs to each limit with every look at 95% (naive) or at α/K (the kit).
    'higher' and 'different' rest on the t statistic alone, so they are shown at one CV."""
    rows = []
    for c, (level, cv) in enumerate(cv_levels.items()):
        other, base = draws(0.0, max(limits + (PAPER_RUNS,)), cv, count, SEED + 200 + c)
        for case, band, false, target in AA_CASES:
            if c and band[0] == 1.0:
                continue
            row = {"A/A case": case, "CV": f"{cv:.1%} ({level})" if band[0] != 1.0 else "any"}
            status, _ = sequential.simulate(
                other[:, :PAPER_RUNS], base[:, :PAPER_RUNS], band, [core.ALPHA], start=PAPER_RUNS
            )
            row[f"fixed {PAPER_RUNS}"] = float(np.mean(status == false))
            for limit in limits:
                stopping = sequential.Stopping(max_repetitions=limit)
                looks = stopping.looks(core.MIN_RUNS)
                for name, alpha in (("95%", core.ALPHA), (f"α/{looks}", stopping.look_alpha(core.MIN_RUNS))):
                    status, _ = sequential.simulate(
                        other[:, :limit],
                        base[:, :limit],
                        band,
                        [alpha] * looks,
                        looks=stopping.look_points(core.MIN_RUNS),
                    )
                    row[f"3→{limit} {name}"] = float(np.mean(status == false))
            row["target (α/K)"] = target
            rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- a real A/A run


def aa_counts(table: pd.DataFrame, band: core.Band = core.EQUAL) -> dict[str, int]:
    """Of `replicas.aa_table`'s intervals: how many configurations, how many intervals exclude 1, and how
    the equality band decides them ("different": wholly outside it; "equal": wholly inside)."""
    finite = table[np.isfinite(table["ci_low"].astype(float)) & np.isfinite(table["ci_high"].astype(float))]
    status = core.band_status(finite["ci_low"].to_numpy(float), finite["ci_high"].to_numpy(float), band)
    return {
        "configurations": len(table),
        "excluding 1": int(((finite["ci_low"] > 1) | (finite["ci_high"] < 1)).sum()),
        "different": int((status == core.NOT_REPRODUCED).sum()),
        "equal": int((status == core.REPRODUCED).sum()),
        "undecided": int(len(table) - (status != core.INCONCLUSIVE).sum()),
    }


def run_aa(experiment: str, results: Path) -> tuple[float, int, Path]:
    """`kit run EXPERIMENT --env native --env native+replica` (quick, no notebook) into `results`: wall
    seconds, exit code and the log it wrote."""
    command = [sys.executable, "-m", "kitlib.cli", "run", experiment, "--env", "native", "--env", "native+replica"]
    log = results / f"{experiment}.log"
    results.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(
            [*command, "--profile", "quick", "--no-notebook"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "KIT_RESULTS": str(results)},
            cwd=PROJECT_ROOT,
        )
    return time.monotonic() - started, done.returncode, log


def real_aa(experiments: list[str], results: Path) -> pd.DataFrame:
    """Each experiment run A/A, its intervals counted (`aa_counts`), its wall and tool minutes, and its
    decisions (either way) per hour of wall time."""
    rows = []
    for name in experiments:
        wall, code, log = run_aa(name, results)
        folder = results / name
        records = load_records(folder) if any(folder.glob("*/records.csv")) else pd.DataFrame()
        tool = sum(timing.store_tool_time(run)[0] for run in folder.glob("*/") if (run / "units").is_dir())
        counts = aa_counts(replicas.aa_table(records))
        if code:
            print(f"{name}: kit run ended {code}; last lines of {log}:")
            print("\n".join(log.read_text().splitlines()[-5:]))
        rows.append(
            {
                "experiment": name,
                **counts,
                "wall min": wall / 60,
                "tool min": tool / 60,
                "decided per hour": (counts["equal"] + counts["different"]) / (wall / 3600),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- output


def percent(table: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    shown = table.copy()
    for column in columns:
        shown[column] = [f"{v:.1%}" for v in shown[column]]
    return shown


def per_hour_cell(row: pd.Series) -> str:
    if row["design"] == PAPER:
        return f"{row['per_hour']:.1f}"
    return (
        f"{row['per_hour']:.1f} [{row['vs paper']:.2f}×]"
        if np.isfinite(row["vs paper"])
        else f"{row['per_hour']:.1f} [—]"
    )


def simulated(count: int, minutes: float) -> None:
    for claim in SHAPES:
        assert str(claim.band) == band_of(claim.claim), (claim, band_of(claim.claim))
    host, cvs, records = main_host_cvs()
    print(f"Run-to-run CV of per-repetition means, data/sample host {host} ({len(cvs)} series):")
    noise = noise_by_experiment(cvs)
    print(percent(noise, [c for c in noise.columns if c.startswith("q")]).to_string(index=False))
    compared = claim_series_cvs(cvs, records)
    print()
    print(f"The same, of the {len(compared)} series the claims compare there (the noise the simulation draws):")
    noise = noise_by_experiment(compared)
    print(percent(noise, [c for c in noise.columns if c.startswith("q")]).to_string(index=False))
    levels = {f"q{round(100 * q)}": float(compared["cv"].quantile(q)) for q in CV_QUANTILES}
    print()
    print(f"Time to a verdict ({count} simulated claims a row; {minutes:g} min a repetition of both sides):")
    shapes = ", ".join(f"{s.claim} {s.band}" for s in SHAPES)
    print(f"claim shapes from {shapes}")
    table = time_to_verdict(count, levels, minutes)
    print("share decided (mean runs a side):")
    print(side_by_side(table, lambda r: f"{r['decided']:.1%} ({r['runs']:.2f})").to_string(index=False))
    print(f"decided the wrong way: at most {table['wrong'].max():.1%} of claims in any cell")
    print("claims decided per hour of machine time [÷ the paper's; — where it decides under 5%]:")
    print(side_by_side(table, per_hour_cell).to_string(index=False))
    print()
    print(f"A/A false decisions under adaptive stopping ({count} simulated runs a cell):")
    aa = aa_false_decisions(count, levels)
    print(percent(aa, [c for c in aa.columns if c not in ("A/A case", "CV", "target (α/K)")]).to_string(index=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2000 draws a cell instead of 20000 (a smoke run)")
    parser.add_argument("--minutes-per-repetition", type=float, default=MINUTES_PER_REPETITION)
    parser.add_argument("--real", action="store_true", help="also run the real A/A (root; about a minute each)")
    parser.add_argument("--experiments", default=",".join(REAL_EXPERIMENTS))
    parser.add_argument("--results", type=Path, help="results folder of the real runs (default: a temporary one)")
    args = parser.parse_args()
    started = time.monotonic()
    simulated(2000 if args.quick else 20000, args.minutes_per_repetition)
    print(f"(simulated part: {time.monotonic() - started:.0f} s)")
    if not args.real:
        return 0
    names = [n for n in args.experiments.split(",") if n]
    print()
    print(f"Real A/A: native against native+replica, quick profile, band {core.EQUAL}:")
    with tempfile.TemporaryDirectory(prefix="kitlib-time-to-verdict-") as scratch:
        table = real_aa(names, args.results or Path(scratch))
    shown = table.copy()
    for column in ("wall min", "tool min", "decided per hour"):
        shown[column] = [f"{v:.1f}" for v in table[column]]
    print(shown.to_string(index=False))
    total = table[["configurations", "excluding 1", "different", "equal"]].sum()
    hours = table["wall min"].sum() / 60
    print(
        f"total: {total['configurations']} configurations, {total['excluding 1']} intervals exclude 1 "
        f"({total['excluding 1'] / max(total['configurations'], 1):.1%}), {total['different']} decided 'different', "
        f"{total['equal']} 'equal'; {(total['equal'] + total['different']) / hours:.0f} decisions per hour of wall time"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
