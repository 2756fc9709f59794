"""The chapters' exercises: each a question, the function of the records that answers it, a tolerance and a
hint, so that a student's answer is checked against the records the chapter shows (never a number
written into the notebook)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from kitlib.analyse import littles_law
from kitlib.analyse.tour import findings, points
from kitlib.analyse.tour.records import sample
from kitlib.core import latency_analysis, stats


@dataclass(frozen=True)
class Exercise:
    name: str
    question: str
    answer: Callable[[pd.DataFrame], object]
    tolerance: float = 0.05  # relative, for numbers; text answers must match exactly (case aside)
    hint: str = ""


def _tail_ratio(df: pd.DataFrame) -> float:
    rows = points.rows(df, workload="rand_read_latency", metric="clat_percentile", env="native")
    by = rows.groupby("percentile")["value"].mean()
    if not {50.0, 99.0} <= set(by.index):
        raise KeyError("no fio latency job of native with its 50th and 99th percentiles")
    return float(by[99.0] / by[50.0])


def _median_run_p99(df: pd.DataFrame) -> float:
    rows = points.rows(df, workload="shares", env="native", metric="latency_p99")
    if rows.empty:
        raise KeyError("no p99 of native in the shares part")
    return float(rows["value"].median())


def _xr(df: pd.DataFrame, env: str, clients: int) -> float:
    table = littles_law.check(df)
    return float(points.rows(table, experiment="redis", env=env, clients=clients)["XR"].mean())


def _quota_table(df: pd.DataFrame) -> pd.DataFrame:
    table = latency_analysis.quota_table(df)
    if table.empty:
        raise KeyError("no quota sweep (the latency study's part `quota`)")
    return table


def _unthrottled(df: pd.DataFrame) -> float:
    return float(latency_analysis.unthrottled_utilization(_quota_table(df)))


def _measured_knee(df: pd.DataFrame) -> float:
    return float(findings.measured_knee(_quota_table(df)))


def _nat_verdict(df: pd.DataFrame) -> str:
    nat = points.redis_values(df, "docker-nat-volume", "throughput", 48)
    native = points.redis_values(df, "native", "throughput", 48)
    return stats.compare_samples(nat, native).verdict


EXERCISES: dict[str, list[Exercise]] = {
    "01": [
        Exercise(
            "nat_extra_us",
            "Redis, 1 connection (pipeline 10): how many µs does docker-nat-volume add to native's mean latency?",
            lambda df: (
                points.redis_mean(df, "docker-nat-volume", "latency_mean", 1)
                - points.redis_mean(df, "native", "latency_mean", 1)
            ),
            0.10,
            "the table above: mean latency_mean of the runs, docker-nat-volume minus native (op 'mix', clients 1)",
        ),
        Exercise(
            "host_over_native",
            "Same point: the ratio docker-host-volume / native of the mean latency (host networking, no NAT)?",
            lambda df: (
                points.redis_mean(df, "docker-host-volume", "latency_mean", 1)
                / points.redis_mean(df, "native", "latency_mean", 1)
            ),
            0.05,
            "the table above: docker-host-volume's mean divided by native's (a ratio of means, no unit)",
        ),
    ],
    "02": [
        Exercise(
            "native_median_run_p99_us",
            "Latency study, CPU shares: native's 99th-percentile round trip, as the median of its runs (µs)?",
            _median_run_p99,
            0.02,
            "the p99 of each run is listed above; the median of three values is the middle one",
        ),
        Exercise(
            "fio_tail_ratio",
            "fio random read, native: how many times its median is the 99th percentile of completion latency?",
            _tail_ratio,
            0.05,
            "the percentile table above: native's row 99.0 divided by its row 50.0",
        ),
    ],
    "03": [
        Exercise(
            "outstanding_8",
            "Redis with 8 connections and pipeline 10: how many requests are outstanding (N)?",
            lambda df: 80.0,
            0.0,
            "each connection keeps its whole pipeline in flight: connections × pipeline depth",
        ),
        Exercise(
            "xr_native_8",
            "Native at 8 connections: throughput × mean latency (X·R, mean over the runs)?",
            lambda df: _xr(df, "native", 8),
            0.05,
            "the Little's-law table above, row redis / native / N = 80, column XR (or littles_law.check(records))",
        ),
    ],
    "04": [
        Exercise(
            "unthrottled_cpu_pct",
            "The server's CPU use with the largest quota (% of one CPU), as the latency analysis estimates it?",
            _unthrottled,
            0.05,
            "the quota table's last row (the largest quota), column server_cpu_utilization",
        ),
        Exercise(
            "quota_p99_near_unthrottled",
            "The smallest --cpu-quota (µs per 10 ms period) whose p99 stays within twice the p99 at the largest quota?",
            _measured_knee,
            0.0,
            "double the last row's latency_p99, then find the smallest quota whose latency_p99 is not above that",
        ),
    ],
    "05": [
        Exercise(
            "nat_throughput_ratio",
            "Redis, 48 connections: docker-nat-volume's throughput as a ratio to native's (ratio of means)?",
            lambda df: float(
                points.redis_values(df, "docker-nat-volume", "throughput", 48).mean()
                / points.redis_values(df, "native", "throughput", 48).mean()
            ),
            0.02,
            "mean throughput of docker-nat-volume at clients 48 divided by native's (the figure's ratio is of "
            "geometric means, so it differs a little)",
        ),
        Exercise(
            "nat_throughput_verdict",
            "Is that difference 'significant' or 'not significant' (Welch's test, 3 runs a side)?",
            _nat_verdict,
            hint="the ratio table above, row docker-nat-volume at 48 connections, column verdict",
        ),
    ],
}


def questions(chapter: str) -> None:
    """Print the chapter's exercises, each with the name its answer goes under."""
    for exercise in EXERCISES[chapter]:
        print(f"{exercise.name}: {exercise.question}")


def expected(chapter: str, df: pd.DataFrame | None = None) -> dict[str, object]:
    """The answers the records give (for a teacher, and for the tests)."""
    df = sample() if df is None else df
    return {e.name: e.answer(df) for e in EXERCISES[chapter]}


def answer_key(df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every chapter's questions with the answers these records give and the tolerance a check allows: the
    teacher's key (`kit tour answers`), computed, so it follows the records when they are measured again."""
    df = sample() if df is None else df
    rows = []
    for chapter, exercises in EXERCISES.items():
        for exercise in exercises:
            try:
                answer = exercise.answer(df)
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as exc:
                answer = f"not in these records: {exc.args[0] if exc.args else exc}"
            tolerance = "exact" if isinstance(answer, str) or not exercise.tolerance else f"±{exercise.tolerance:.0%}"
            rows.append({"chapter": chapter, "exercise": exercise.name, "answer": answer, "accepted": tolerance,
                         "question": exercise.question})  # fmt: skip
    return pd.DataFrame(rows)


def _correct(given, truth, tolerance: float) -> bool:
    if isinstance(truth, str):
        return str(given).strip().lower() == truth.lower()
    try:
        given = float(given)
    except (TypeError, ValueError):
        return False
    return abs(given - truth) <= max(tolerance * abs(truth), 1e-9)


def unknown_names(chapter: str, answers: dict[str, object]) -> dict[str, str | None]:
    """Answer names no exercise of the chapter has, each with the name it most likely meant (or None)."""
    known = [e.name for e in EXERCISES[chapter]]
    return {
        name: next(iter(difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)), None)
        for name in answers
        if name not in known
    }


def check(chapter: str, answers: dict[str, object], df: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each answer against the records: correct, not yet (with its whole hint), or not answered; an answer
    under a name no exercise has is named, with the name it probably meant. The report is printed whole
    (a table would cut the hints at its column width); the table is returned for scripts and tests."""
    df = sample() if df is None else df
    misspelled = unknown_names(chapter, answers)
    rows = []
    for exercise in EXERCISES[chapter]:
        given = answers.get(exercise.name)
        try:
            truth = exercise.answer(df)
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as exc:
            reason = exc.args[0] if exc.args else exc
            rows.append(
                {
                    "exercise": exercise.name,
                    "your answer": given,
                    "verdict": f"these records cannot answer it: {reason}",
                }
            )
            continue
        if given is None:
            meant = [name for name, guess in misspelled.items() if guess == exercise.name]
            verdict = f"not answered (is {meant[0]!r} meant to be {exercise.name!r}?)" if meant else "not answered"
        elif _correct(given, truth, exercise.tolerance):
            verdict = "correct"
        else:
            verdict = "not yet" + (f" (hint: {exercise.hint})" if exercise.hint else "")
        rows.append({"exercise": exercise.name, "your answer": given, "verdict": verdict})
    for name, guess in misspelled.items():
        known = ", ".join(e.name for e in EXERCISES[chapter])
        meaning = f"did you mean {guess!r}?" if guess else f"the names are: {known}"
        rows.append({"exercise": name, "your answer": answers[name], "verdict": f"unknown name: {meaning}"})
    table = pd.DataFrame(rows)
    for row in rows:
        print(f"{row['exercise']}: {row['your answer']!r}: {row['verdict']}")
    correct = int((table["verdict"] == "correct").sum())
    print(f"{correct} of {len(EXERCISES[chapter])} correct")
    return table
