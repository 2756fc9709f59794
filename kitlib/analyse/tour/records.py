"""The records a chapter reads: data/sample by default, or a student's own results; always one machine's."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse import analysis
from kitlib.analyse.figures import hosts

SAMPLE = "data/sample"


def load(source: str = SAMPLE) -> pd.DataFrame:
    """The records under `source` (a folder taken from the project root: data/sample, results, a run's
    folder) of the machine that has most of them: two machines' records are never pooled, and the tour's
    lessons compare environments of one machine."""
    records = analysis.load([source])
    main_host = records["host"].value_counts().idxmax()
    return records[records["host"] == main_host].reset_index(drop=True)


def sample() -> pd.DataFrame:
    """data/sample's main host (real runs made by the kit, with provenance)."""
    return load(SAMPLE)


def describe(records: pd.DataFrame, source: str = SAMPLE) -> str:
    """One line a chapter prints first: how many records, from where, of which machine."""
    host = str(records["host"].iloc[0]) if len(records) else "none"
    return f"{len(records)} records from {source}, {hosts.describe(records, host) if len(records) else 'no host'}"
