"""The studies' testable findings as named claims over records, decided on intervals.

Each claim declares a band on an effect (see `kitlib.claims.core`) and evaluates to `reproduced`,
`not reproduced`, `inconclusive` or `not testable here`, with evidence written from the same interval.
Records of different hosts are never pooled: `evaluate_all` decides per host. Absolute numbers are never
compared with the papers; ratios and differences are.
"""

from __future__ import annotations

import pandas as pd

from kitlib import experiments, hostfacts
from kitlib.claims import felter, latency, seeds
from kitlib.claims.core import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    STATUSES,
    Claim,
    Verdict,
)

CLAIMS: list[Claim] = [*felter.CLAIMS, *latency.CLAIMS, *seeds.CLAIMS]

__all__ = [
    "CLAIMS",
    "INCONCLUSIVE",
    "NOT_REPRODUCED",
    "NOT_TESTABLE",
    "REPRODUCED",
    "STATUSES",
    "Claim",
    "Verdict",
    "evaluate_all",
    "of",
]

COLUMNS = ["claim", "host", "source", "statement", "status", "reason", "ratio", "ci_low", "ci_high", "p_value", "n"]


def of(experiment: str) -> list[Claim]:
    """The claims an experiment's schema says its records decide."""
    names = set(experiments.schema(experiment).claims)
    return [claim for claim in CLAIMS if claim.name in names]


def evaluate_all(df: pd.DataFrame, experiment: str | None = None) -> pd.DataFrame:
    """Every claim's verdict on these records (only the experiment's where one is named), one row per
    claim and host (hosts are never pooled)."""
    chosen = of(experiment) if experiment else CLAIMS
    if df.empty or "env" not in df.columns:
        return _table(df, hostfacts.UNKNOWN_HOST, chosen)
    df = hostfacts.with_host(df)
    return pd.concat([_table(part, host, chosen) for host, part in df.groupby("host", sort=True)], ignore_index=True)


def _table(df: pd.DataFrame, host: str, chosen: list[Claim]) -> pd.DataFrame:
    rows = []
    for claim in chosen:
        verdict = claim.evaluate(df) if not df.empty else Verdict(NOT_TESTABLE, "no records in these records")
        rows.append(
            {
                "claim": claim.name,
                "host": host,
                "source": claim.source,
                "statement": claim.statement,
                **verdict.__dict__,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
