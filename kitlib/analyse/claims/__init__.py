"""The studies' testable findings as named claims over records, decided on intervals.

Each claim quotes the sentence it encodes, declares a band on an effect and the rule that turns the
sentence into that band (see `kitlib.analyse.claims.core`), and evaluates to `reproduced`, `not reproduced`,
`inconclusive` or `not testable here`, with evidence written from the same interval. Records of different
hosts are never pooled: `evaluate_all` decides per host. Absolute numbers are never compared with the
papers; ratios and differences are. The findings no claim tests are listed with the reason in
`kitlib.analyse.claims.unencoded`; `listing` prints both.
"""

from __future__ import annotations

import pandas as pd

from kitlib import specs
from kitlib.analyse.claims import disturbance, felter, latency, seeds, unencoded, versions
from kitlib.analyse.claims.core import (
    DERIVED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    PAPER,
    REPRODUCED,
    STATUSES,
    Claim,
    Verdict,
)
from kitlib.core import hostfacts

CLAIMS: list[Claim] = [*felter.CLAIMS, *latency.CLAIMS, *seeds.CLAIMS]

__all__ = [
    "CLAIMS",
    "DERIVED",
    "PAPER",
    "INCONCLUSIVE",
    "NOT_REPRODUCED",
    "NOT_TESTABLE",
    "REPRODUCED",
    "STATUSES",
    "Claim",
    "Verdict",
    "evaluate_all",
    "verdicts",
    "listing",
    "of",
    "testable_by_the_kit",
]

COLUMNS = [
    *("claim", "host", "source", "statement", "status", "reason", "ratio", "ci_low", "ci_high", "p_value", "n"),
    *("alpha", "needed", "envs", "workloads"),
]


LISTING_COLUMNS = ["claim", "source", "quote", "band", "kind"]


def listing() -> pd.DataFrame:
    """Every claim with its source, verbatim quote, band (with the rule behind it) and kind, then every
    finding no claim tests, its band column saying why not."""
    rows = [
        {
            "claim": c.name,
            "source": c.cited,
            "quote": c.quote,
            "band": f"{c.band}; rule: {c.rule}" if c.rule else c.band,
            "kind": c.kind,
        }
        for c in CLAIMS
    ]
    rows += [
        {"claim": f.name, "source": f.cited, "quote": f.quote, "band": f.line, "kind": unencoded.NOT_ENCODED}
        for f in unencoded.FINDINGS
    ]
    return pd.DataFrame(rows, columns=LISTING_COLUMNS)


def of(experiment: str) -> list[Claim]:
    """The claims an experiment's schema says its records decide."""
    names = set(specs.schema(experiment).claims)
    return [claim for claim in CLAIMS if claim.name in names]


def testable_by_the_kit(experiment: str) -> bool:
    """Whether some run of the kit could test one of the experiment's claims: false where each names a
    platform the kit never runs (`Claim.outside_the_kit`), so its runs serve figures, never a verdict."""
    return any(not claim.outside_the_kit for claim in of(experiment))


def evaluate_all(df: pd.DataFrame, experiment: str | None = None, allow_mixed_versions: bool = False) -> pd.DataFrame:
    """Every claim's verdict on these records (only the experiment's where one is named), one row per
    claim and host (hosts are never pooled); a verdict resting on runs of differing tool versions is
    left undecided unless `allow_mixed_versions` (`kitlib.analyse.claims.versions`); points every attempt
    of which was disturbed are left out, said in the evidence (`kitlib.analyse.claims.disturbance`)."""
    rows = [
        {"claim": claim.name, "host": host, "source": claim.cited, "statement": claim.statement, **verdict.__dict__}
        for host, claim, verdict in verdicts(df, experiment, allow_mixed_versions)
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdicts(
    df: pd.DataFrame, experiment: str | None = None, allow_mixed_versions: bool = False
) -> list[tuple[str, Claim, Verdict]]:
    """(host, claim, verdict) for every host of the records and every claim (the experiment's where one
    is named): what `evaluate_all` tabulates, with the verdicts whole (their parts, for pooling)."""
    chosen = of(experiment) if experiment else CLAIMS
    if df.empty or "env" not in df.columns:
        return [(hostfacts.UNKNOWN_HOST, c, Verdict(NOT_TESTABLE, "no records in these records")) for c in chosen]
    df = hostfacts.with_host(df)
    found = []
    for host, part in df.groupby("host", sort=True):
        counted, left_out = disturbance.split(part)
        for claim in chosen:
            verdict = disturbance.noted(claim, claim.evaluate(counted), left_out, part)
            found.append((str(host), claim, versions.checked(claim, verdict, counted, allow_mixed_versions)))
    return found
