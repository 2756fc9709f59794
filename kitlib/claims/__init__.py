"""The studies' testable findings as named claims over records, decided on intervals.

Each claim declares a band on an effect (see `kitlib.claims.core`) and evaluates to `reproduced`,
`not reproduced`, `inconclusive` or `not testable here`, with evidence written from the same interval.
Records of different hosts are never pooled: `evaluate_all` decides per host. Absolute numbers are never
compared with the papers; ratios and differences are.
"""

from __future__ import annotations

import pandas as pd

from kitlib import hostfacts
from kitlib.claims import felter, latency, seeds
from kitlib.claims.core import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    STATUSES,
    Claim,
    Verdict,
    is_replica,
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
    "noise_floor",
]

COLUMNS = ["claim", "host", "source", "statement", "status", "reason", "ratio", "ci_low", "ci_high", "p_value", "n"]


def evaluate_all(df: pd.DataFrame) -> pd.DataFrame:
    """Every claim's verdict on these records, one row per claim and host (hosts are never pooled)."""
    if df.empty or "env" not in df.columns:
        return _table(df, hostfacts.UNKNOWN_HOST)
    df = hostfacts.with_host(df)
    return pd.concat([_table(part, host) for host, part in df.groupby("host", sort=True)], ignore_index=True)


def _table(df: pd.DataFrame, host: str) -> pd.DataFrame:
    rows = []
    for claim in CLAIMS:
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


def noise_floor(df: pd.DataFrame) -> pd.DataFrame:
    """A/A control series (`<env>+replica`) against their environment, per experiment and metric: the
    ratio two identical series show, the floor under any effect a claim reports."""
    from kitlib.claims.core import effect_between

    rows = []
    if "env" not in df.columns:
        return pd.DataFrame(rows)
    for replica in sorted({e for e in df["env"].astype(str) if is_replica(e)}):
        twin = "+".join(p for p in replica.split("+") if p != "replica")
        for (experiment, metric), part in df[df["env"].isin([replica, twin])].groupby(["experiment", "metric"]):
            found = effect_between(part, replica, twin)
            if isinstance(found, str):
                continue
            rows.append(
                {
                    "experiment": experiment,
                    "metric": metric,
                    "env": twin,
                    "ratio": found.value,
                    "ci_low": found.low,
                    "ci_high": found.high,
                    "n": found.n,
                }
            )
    return pd.DataFrame(rows)
