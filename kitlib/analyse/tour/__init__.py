"""The tour for a course (notebooks/tour/): the records a chapter reads, what the chapter says about them
(computed, so its sentences hold on any records), its drawings, and its exercises, whose answers are
computed from the records so that a student's answer can be checked.

A notebook stays thin: it reads `records`, shows the findings and figures, holds only the student's answers
and calls `check(chapter, answers)`. `kit tour start DIR` gives a student a copy of their own.
"""

from __future__ import annotations

import pandas as pd

from kitlib.analyse.tour import exercises, findings, student
from kitlib.analyse.tour.drawings import (
    PATHS,
    block_figure,
    cdf_figure,
    littles_law_figure,
    paths_diagram,
    quota_figure,
    ratio_intervals,
    redis_figure,
)
from kitlib.analyse.tour.exercises import EXERCISES, Exercise, answer_key, expected, questions, unknown_names
from kitlib.analyse.tour.findings import (
    fio_tails,
    interval_lessons,
    littles_law_findings,
    littles_law_points,
    littles_law_shape,
    noise_floor,
    quota_cliff,
    quota_spread,
    request_paths,
    shares_tails,
)
from kitlib.analyse.tour.points import redis_latency, redis_ratios
from kitlib.analyse.tour.records import SAMPLE, describe, load, sample
from kitlib.analyse.tour.student import start

__all__ = [
    "EXERCISES",
    "PATHS",
    "SAMPLE",
    "Exercise",
    "answer_key",
    "block_figure",
    "cdf_figure",
    "check",
    "describe",
    "exercises",
    "expected",
    "findings",
    "fio_tails",
    "interval_lessons",
    "littles_law_figure",
    "littles_law_findings",
    "littles_law_points",
    "littles_law_shape",
    "load",
    "noise_floor",
    "open_chapter",
    "paths_diagram",
    "questions",
    "quota_figure",
    "quota_cliff",
    "quota_spread",
    "ratio_intervals",
    "redis_figure",
    "redis_latency",
    "redis_ratios",
    "request_paths",
    "sample",
    "shares_tails",
    "start",
    "student",
    "unknown_names",
]


def open_chapter(source: str = SAMPLE) -> pd.DataFrame:
    """What a chapter's first cell does: a note where the chapter runs in the project's tracked copy, the
    records of one machine under `source`, and a line saying how many, from where, of which machine."""
    note = student.where_note()
    if note:
        print(note)
    records = load(source)
    print(describe(records, source))
    return records


def check(chapter: str, answers: dict[str, object], df: pd.DataFrame | None = None) -> pd.DataFrame:
    """`exercises.check`, and the answers kept in the student's folder (never in the project's)."""
    table = exercises.check(chapter, answers, df)
    student.keep_answers(chapter, answers)
    return table
