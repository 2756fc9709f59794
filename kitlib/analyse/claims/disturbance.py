"""Points every attempt of which was disturbed are left out of a verdict, and the evidence says so.

The interference rule measures a disturbed point again, at most `max_attempts` times; when every
attempt was disturbed the last one stays in the records, marked `disturbed`, so the figures and tables
show what the machine gave. A verdict is held to more: it rests on points measured on the machine the
run usually had. In a quick reproduce the guest's memory bandwidth rose from about 57 to 100 GB/s
under the memory run's last repetition; Docker's STREAM and RandomAccess points of it read 168–172% of
the run's usual figure in all three attempts, and kept, they would stand beside native's runs at 57 as
if Docker had been faster. Left out, the claim has the runs the machine usually gave (fewer, so the
more an until-decided run adds: its candidates come from these verdicts).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from kitlib.analyse.claims.core import NOT_TESTABLE, Claim, Verdict
from kitlib.analyse.claims.versions import rows_under
from kitlib.core.records import flag_is, one_per_point

COLUMN = "disturbed"
#: a duet side's word on its other side (`kitlib.measure.run.duet`)
PARTNER_COLUMN = "duet_partner_disturbed"


def split(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the records of points that count for a verdict, those of points every attempt of which was
    disturbed); records without the column (made before the rule) all count. A duet point both sides of
    which were disturbed counts: what disturbed both at once cancels from the ratio within the duet, the
    evidence; one disturbed while the other was not does not."""
    if COLUMN not in df.columns:
        return df, df.iloc[0:0]
    disturbed = flag_is(df[COLUMN], True)
    if PARTNER_COLUMN in df.columns:
        partner = flag_is(df[PARTNER_COLUMN], True)
        in_duet = df[PARTNER_COLUMN].notna()
        disturbed = (disturbed & ~(in_duet & partner)) | (in_duet & partner & ~disturbed)
    return df[~disturbed], df[disturbed]


def noted(claim: Claim, verdict: Verdict, left_out: pd.DataFrame, every: pd.DataFrame) -> Verdict:
    """The verdict with the disturbed points of its environments and workloads named in its evidence.
    A verdict not testable on the points that count names what it would rest on from `every` record:
    its note then says the claim lacks points because they were disturbed, not because none was made."""
    if left_out.empty:
        return verdict
    resting = verdict
    if verdict.status == NOT_TESTABLE:
        resting = claim.evaluate(every)
        if resting.status == NOT_TESTABLE:
            return verdict
    rows = rows_under(claim, resting, left_out)
    if rows.empty:
        return verdict
    points = one_per_point(rows)
    where = ", ".join(
        f"{env} × {count}" for env, count in points["env"].astype(str).value_counts().sort_index().items()
    )
    note = (
        f"{len(points)} point(s) left out, every attempt of theirs disturbed ({where}; the `disturbed` "
        "column and units/*.attempt*.json say why)"
    )
    return dataclasses.replace(verdict, reason=f"{verdict.reason}; {note}")
