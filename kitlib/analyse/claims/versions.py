"""Tool versions under a verdict: flagged where the environments compared differ, and no decision on
an interval that pools runs of differing versions unless the reader allows it.

A claim's predicate chooses its records; its verdict names the environments and workloads it rests on.
This looks at those records once more (one place for every claim, whatever its predicate): where one
configuration of one environment was measured with two versions of a tool (fio upgraded between two
runs), the interval mixes two programs, so the verdict becomes inconclusive, naming the versions, unless
`allow_mixed_versions`; where the environments compared ran different versions (a host's Debian
revision against an image's), that is what was compared, so it is said in the evidence.
"""

from __future__ import annotations

import dataclasses
import functools

import pandas as pd

from kitlib import specs
from kitlib.analyse.claims.core import INCONCLUSIVE, NOT_TESTABLE, Claim, Verdict, configuration_columns
from kitlib.core import tool_versions

#: how the reader allows pooling (named in the evidence of a verdict left undecided for it)
HOW_TO_ALLOW = "allow_mixed_versions=True (`kit claims --allow-mixed-versions`)"


@functools.cache
def _experiments_of(claim: str) -> tuple[str, ...]:
    return tuple(name for name in specs.names() if claim in specs.schema(name).claims)


def rows_under(claim: Claim, verdict: Verdict, df: pd.DataFrame) -> pd.DataFrame:
    """The records a verdict rests on: its claim's experiments, the environments and workloads it names."""
    rows = df[df["experiment"].isin(_experiments_of(claim.name))] if "experiment" in df.columns else df
    if verdict.envs:
        rows = rows[rows["env"].astype(str).isin(verdict.envs)]
    if verdict.workloads and "workload" in rows.columns:
        rows = rows[rows["workload"].astype(str).isin(verdict.workloads)]
    return rows


def checked(claim: Claim, verdict: Verdict, df: pd.DataFrame, allow_mixed_versions: bool = False) -> Verdict:
    """The verdict with what its records' tool versions say: left undecided where it pools runs of
    differing versions (unless allowed, then said), and the versions that differ between the
    environments compared named."""
    if verdict.status == NOT_TESTABLE or tool_versions.COLUMN not in df.columns:
        return verdict
    rows = rows_under(claim, verdict, df)
    if rows.empty:
        return verdict
    pooled = tool_versions.mixed(rows, ["env", *[c for c in configuration_columns(rows) if c != "env"]])
    differing = tool_versions.between(rows)
    reason = verdict.reason
    if differing:
        reason += f"; tool versions differ between the environments compared: {'; '.join(differing)}"
    if pooled and allow_mixed_versions:
        reason += f"; pools runs of differing tool versions (allowed): {'; '.join(pooled)}"
    elif pooled:
        return dataclasses.replace(
            verdict,
            status=INCONCLUSIVE,
            needed=None,
            mixed_versions=True,
            reason=(
                f"not decided: it pools runs of differing tool versions ({'; '.join(pooled)}); compare runs "
                f"of one version, or pass {HOW_TO_ALLOW} to decide on them together; {reason}"
            ),
        )
    return dataclasses.replace(verdict, reason=reason)
