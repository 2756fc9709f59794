"""One claim, many machines: each host's effects and intervals pooled into random-effects estimates.

One host answers "does the claim hold here?"; the paper's question is "does it hold?". Each host's
verdict is first made alone, by the kit's rule (`kitlib.analyse.claims`). A verdict rests on one or more
intervals, each comparing one thing (`docker-nat / native at clients=10`) against one band; each such
part is read back onto the scale it was made on (logarithms for a ratio) with its standard error, and
the same part of every host is combined with statsmodels' `combine_effects`:

- the between-host variance τ² by **Paule–Mandel** (iterated), which unlike DerSimonian–Laird's one
  step solves the generalised Q equation exactly and is the estimator recommended for few studies;
- the pooled interval with the **t distribution on k − 1 degrees of freedom**: with two or three hosts
  the normal quantile would claim far more than the data hold;
- I² (the share of the spread that lies between hosts, not inside them) and the **prediction interval**
  for the next machine, μ ± t(k − 2) · √(τ² + SE(μ)²) (Higgins, Thompson & Spiegelhalter 2009), which
  needs at least three hosts.

Each part is judged by its own band with the kit's one rule: it holds **on average** when the pooled
interval lies inside the band (not reproduced when entirely outside), and **in general** when the
prediction interval does. A claim of several parts holds when every part does, and is not reproduced
when a part lies outside after Holm's step-down over its parts, as on one host. Only
intervals from at least `MIN_RUNS` runs a side are pooled, and never a host's interval that mixes tool
versions (unless the verdicts were made with `allow_mixed_versions`); whatever is left out is named.
The hosts are the records' own (`host` column): the authors' imported runs count as one.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.meta_analysis import combine_effects

from kitlib.analyse import analysis
from kitlib.analyse.claims import INCONCLUSIVE, NOT_TESTABLE, Claim, Verdict
from kitlib.analyse.claims.core import MIN_RUNS, Band, band_status, combine
from kitlib.core import parameters, paths
from kitlib.results import bundles

#: how τ² is estimated (statsmodels' name for Paule–Mandel)
METHOD = "pm"
METHOD_TEXT = "random effects; τ² by Paule–Mandel; pooled interval with t on k − 1 df"
ALPHA = 0.05
#: hosts needed for a prediction interval (its t quantile has k − 2 degrees of freedom)
MIN_HOSTS_PREDICTION = 3

COLUMNS = [
    *("claim", "part", "hosts", "pooled", "ci_low", "ci_high", "pi_low", "pi_high", "tau2", "i2"),
    *("on_average", "in_general", "band", "left_out"),
]
CLAIM_COLUMNS = ["claim", "parts", "hosts", "on_average", "in_general", "left_out"]


def records_of(sources=None, allowed_signers: str | Path | None = None) -> pd.DataFrame:
    """The records of results folders and of bundles (`kit bundle`), each bundle verified whole (and its
    signature checked against `allowed_signers` when given) before a record of it is read; `sources` in
    any form `kitlib.core.parameters` reads, relative paths from the project root, default results/."""
    with contextlib.ExitStack() as stack:
        folders = []
        for given in parameters.as_list("sources", sources) or [str(paths.results_root())]:
            path = paths.from_root(given)
            folders.append(stack.enter_context(bundles.opened(path, allowed_signers)) if path.is_file() else path)
        return analysis.load(folders)


@dataclass(frozen=True)
class HostEffect:
    """One host's interval for one part, on the scale it was made on, with its standard error."""

    host: str
    estimate: float  # log ratio, difference or level
    se: float
    n: int
    verdict: str
    #: the host's own interval, as its verdict gave it (on the claim's scale)
    ci_low: float
    ci_high: float


@dataclass
class PooledPart:
    """One part of a claim pooled across hosts (back on the claim's own scale: a ratio, not its log)."""

    claim: str
    subject: str
    scale: str
    band: Band
    hosts: list[HostEffect]
    left_out: list[str] = field(default_factory=list)
    pooled: float = math.nan
    ci: tuple[float, float] = (math.nan, math.nan)
    prediction: tuple[float, float] = (math.nan, math.nan)
    tau2: float = math.nan
    i2: float = math.nan
    on_average: str = INCONCLUSIVE
    in_general: str = INCONCLUSIVE

    def back(self, value: float) -> float:
        """A value of the pooling scale on the claim's own (a log ratio back to a ratio)."""
        return math.exp(value) if self.scale == "ratio" else value

    def host_rows(self) -> pd.DataFrame:
        """Each pooled host's effect and its own interval (as its verdict gave it), for a forest plot."""
        columns = ["host", "effect", "ci_low", "ci_high", "n", "verdict"]
        rows = [(h.host, self.back(h.estimate), h.ci_low, h.ci_high, h.n, h.verdict) for h in self.hosts]
        return pd.DataFrame(rows, columns=columns)


@dataclass
class PooledClaim:
    """A claim across hosts: its parts pooled one by one, and what could not be pooled."""

    claim: Claim
    parts: list[PooledPart]
    left_out: list[str]
    hosts: list[str]

    @property
    def on_average(self) -> str:
        return _every([_as_verdict(p, p.on_average, p.ci, len(p.hosts) - 1) for p in self.parts])

    @property
    def in_general(self) -> str:
        return _every([_as_verdict(p, p.in_general, p.prediction, len(p.hosts) - 2) for p in self.parts])


def _as_verdict(part: PooledPart, status: str, interval: tuple[float, float], df: int) -> Verdict:
    """A pooled part's interval (on t with `df` degrees of freedom) as a one-interval verdict, so that
    the claim's parts are combined by the kit's one rule."""
    low, high = interval
    return Verdict(
        status, part.subject, ci_low=low, ci_high=high, subject=part.subject, scale=part.scale, df=df, band=part.band
    )


def _every(parts: list[Verdict]) -> str:
    """The kit's rule for a claim of parts (`claims.core.combine`: 'not reproduced' after Holm's step-down
    over the parts, 'reproduced' when every part is); no part pooled: not testable."""
    return combine(parts, "parts", every_part=True).status if parts else NOT_TESTABLE


def host_effect(host: str, leaf: Verdict) -> HostEffect | str:
    """A host's one-interval verdict read back as an estimate and standard error, or why it is left out."""
    if leaf.n < MIN_RUNS:
        return f"{host}: {leaf.n} run(s) a side (at least {MIN_RUNS})"
    to = math.log if leaf.scale == "ratio" else float
    try:
        centre, width = to(leaf.ratio), to(leaf.ci_high) - to(leaf.ci_low)
    except ValueError:
        return f"{host}: an interval that is not positive on a ratio scale"
    if not (math.isfinite(centre) and math.isfinite(width) and width > 0 and leaf.df > 0):
        return f"{host}: no finite interval"
    se = width / (2 * float(sps.t.ppf(1 - leaf.alpha / 2, leaf.df)))
    return HostEffect(host, centre, se, leaf.n, leaf.status, leaf.ci_low, leaf.ci_high)


def pool_part(claim: str, subject: str, found: list[tuple[str, Verdict]]) -> PooledPart:
    """One part (`subject`) of a claim, as each host's verdict gave it, pooled."""
    first = found[0][1]
    part = PooledPart(claim, subject, first.scale, first.band, [])
    for host, leaf in found:
        effect = host_effect(host, leaf)
        if isinstance(effect, str):
            part.left_out.append(effect)
        elif (leaf.scale, leaf.band) != (first.scale, first.band):
            part.left_out.append(f"{host}: another scale or band ({leaf.scale}, {leaf.band})")
        else:
            part.hosts.append(effect)
    if len(part.hosts) < 2:
        part.left_out.append(f"pooling needs at least 2 hosts with an interval ({len(part.hosts)} here)")
        return part
    k = len(part.hosts)
    estimates = np.array([h.estimate for h in part.hosts])
    variances = np.array([h.se**2 for h in part.hosts])
    with np.errstate(divide="ignore", invalid="ignore"):  # identical hosts: Q = 0, I² taken as 0 below
        combined = combine_effects(estimates, variances, method_re=METHOD, use_t=True, alpha=ALPHA)
    mean, se = float(combined.mean_effect_re), float(combined.sd_eff_w_re)
    half = float(sps.t.ppf(1 - ALPHA / 2, k - 1)) * se
    q = float(combined.q)
    part.tau2 = max(float(combined.tau2), 0.0)
    part.i2 = max((q - (k - 1)) / q, 0.0) if q > 0 else 0.0  # Higgins & Thompson's I², from Cochran's Q
    part.pooled = part.back(mean)
    part.ci = (part.back(mean - half), part.back(mean + half))
    part.on_average = _status(part.ci, part.band)
    if k >= MIN_HOSTS_PREDICTION:
        spread = float(sps.t.ppf(1 - ALPHA / 2, k - 2)) * math.sqrt(part.tau2 + se**2)
        part.prediction = (part.back(mean - spread), part.back(mean + spread))
        part.in_general = _status(part.prediction, part.band)
    else:
        part.left_out.append(f"a prediction interval needs at least {MIN_HOSTS_PREDICTION} hosts ({k} here)")
    return part


def _status(interval: tuple[float, float], band: Band) -> str:
    return str(band_status(np.array([interval[0]]), np.array([interval[1]]), band)[0])


def pool(verdicts: Iterable[tuple[str, Claim, Verdict]]) -> list[PooledClaim]:
    """Every claim of `claims.verdicts(records)` pooled across the hosts it was decided on, part by part."""
    by_claim: dict[str, tuple[Claim, list[tuple[str, Verdict]]]] = {}
    for host, claim, verdict in verdicts:
        by_claim.setdefault(claim.name, (claim, []))[1].append((host, verdict))
    pooled = []
    for claim, hosts in by_claim.values():
        left_out: list[str] = []
        subjects: dict[str, list[tuple[str, Verdict]]] = {}
        for host, verdict in hosts:
            if verdict.status == NOT_TESTABLE:
                left_out.append(f"{host}: not testable there")
            elif verdict.mixed_versions:
                left_out.append(f"{host}: its intervals pool runs of differing tool versions")
            elif not verdict.leaves():
                left_out.append(f"{host}: its verdict rests on no interval the kit can pool")
            for leaf in () if verdict.mixed_versions else verdict.leaves():
                subjects.setdefault(leaf.subject, []).append((host, leaf))
        parts = [pool_part(claim.name, subject, found) for subject, found in subjects.items()]
        pooled.append(PooledClaim(claim, parts, left_out, sorted({h for h, _ in hosts})))
    return pooled


def parts_table(pooled: list[PooledClaim]) -> pd.DataFrame:
    """One row per claim and part: hosts pooled, estimate, intervals, τ², I², both verdicts, left out."""
    rows = [
        {
            "claim": c.claim.name,
            "part": p.subject,
            "hosts": len(p.hosts),
            "pooled": p.pooled,
            "ci_low": p.ci[0],
            "ci_high": p.ci[1],
            "pi_low": p.prediction[0],
            "pi_high": p.prediction[1],
            "tau2": p.tau2,
            "i2": p.i2,
            "on_average": p.on_average,
            "in_general": p.in_general,
            "band": str(p.band),
            "left_out": "; ".join(p.left_out),
        }
        for c in pooled
        for p in c.parts
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def table(pooled: list[PooledClaim]) -> pd.DataFrame:
    """The parts table with each claim's own verdicts beside its parts (every part must hold), and a row
    for each claim no part of which could be pooled, saying why."""
    parts = parts_table(pooled)
    claims = claims_table(pooled).rename(
        columns={"on_average": "claim_on_average", "in_general": "claim_in_general", "left_out": "claim_left_out"}
    )
    merged = claims.drop(columns=["parts", "hosts"]).merge(parts, on="claim", how="left")
    merged["hosts"] = merged["hosts"].fillna(0).astype(int)
    for column in ("on_average", "in_general"):
        merged[column] = merged[column].fillna(merged[f"claim_{column}"])
    left = merged["left_out"].fillna("")
    merged["left_out"] = [
        "; ".join(x for x in (a, b) if x) for a, b in zip(merged.pop("claim_left_out"), left, strict=True)
    ]
    return merged[[*COLUMNS[:-1], "claim_on_average", "claim_in_general", "left_out"]]


def claims_table(pooled: list[PooledClaim]) -> pd.DataFrame:
    """One row per claim: how many parts, the hosts it was decided on, both verdicts, who was left out."""
    rows = [
        {
            "claim": c.claim.name,
            "parts": len(c.parts),
            "hosts": len(c.hosts),
            "on_average": c.on_average,
            "in_general": c.in_general,
            "left_out": "; ".join(c.left_out),
        }
        for c in pooled
    ]
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


__all__ = [
    *("METHOD", "METHOD_TEXT", "HostEffect", "PooledClaim", "PooledPart"),
    *("claims_table", "parts_table", "pool", "records_of", "table"),
]
