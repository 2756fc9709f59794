"""Seed 004, "Latency Impact of Docker Containers: A Closer Look": shares, quota, bridge, overlay."""

from __future__ import annotations

import math

import pandas as pd

from kitlib.analyse.claims.core import (
    DERIVED,
    EQUAL,
    INCONCLUSIVE,
    MIN_RUNS,
    NOT_REPRODUCED,
    NOT_TESTABLE,
    REPRODUCED,
    RULE_BOUND,
    RULE_DIRECTION,
    RULE_EQUAL,
    RULE_EVERY,
    RULE_STATED,
    Band,
    Claim,
    Effect,
    Verdict,
    all_of,
    compare,
    decide,
    exact,
    kind,
    missing,
    slope_above_zero,
    stated_ratio,
)
from kitlib.core import latency_analysis, sequential
from kitlib.core.stats import log_ratio_interval

SOURCE = "Latency Impact of Docker Containers: A Closer Look"
#: the fixed cost is "nearly 10%" of a round trip of "over 200 us" at size 0: about 20 µs; a cost that is
#: fixed changes across the sizes by less than half of it
BRIDGE_FIXED_US = 10.0


def _runs_per_env(rows: pd.DataFrame, by: list[str]) -> int:
    counts = rows.groupby(["env", *by], dropna=False).size()
    return int(counts.min()) if len(counts) else 0


#: p99 at a quota more than this many times the unthrottled p99 is a collapsed tail
COLLAPSE_FACTOR = 3.0


CONTRADICTED_RULE = (
    "a quota is on the wrong side only where its interval at 1 − α/m for the m quotas tested lies there "
    "(Bonferroni, Holm's first step: 'not reproduced' at family-wise α ≤ 0.05); every quota on its side at "
    "its own level reproduces"
)


def _contradicted(values: pd.Series, reference: pd.Series, alpha: float, side: str) -> str:
    """`side` ('yes': collapsed, 'no': not) where the quota's interval at 1 − alpha (the claim's share of
    α over its quotas) still lies on it, else the interval that does not decide it."""
    _, low, high, _, _ = log_ratio_interval(values, reference, alpha)
    if (low > COLLAPSE_FACTOR) if side == "yes" else (high < COLLAPSE_FACTOR):
        return side
    return f"{100 * (1 - alpha):.4g}% CI [{low:.2g}, {high:.2g}] crosses {COLLAPSE_FACTOR:g}×"


def _latency_quota_cliff(df: pd.DataFrame) -> Verdict:
    """Each quota's p99 against the p99 at the largest quota (the server unthrottled), as a ratio with its
    95% interval: quotas well below the server's own CPU use (≤ 80% of it) must be decidedly collapsed
    (interval above 3×), quotas well above it (≥ 125%) decidedly not (interval below 3×). A quota on
    the wrong side refutes the claim only at its share of α over the quotas (`CONTRADICTED_RULE`)."""

    rows = df[df["experiment"] == "latency"]
    table = latency_analysis.quota_table(rows)
    if table.empty or len(table) < 2:
        return missing("latency quota sweep")
    p99 = rows[(rows["workload"] == "quota") & (rows["metric"] == "latency_p99")]
    n = _runs_per_env(p99, [])
    if n < MIN_RUNS:
        return Verdict(
            INCONCLUSIVE,
            f"only {n} run(s) per quota; at least {MIN_RUNS} are needed to tell a collapse of p99 from noise",
            n=n,
        )
    needed = latency_analysis.unthrottled_utilization(table)
    alpha = sequential.alpha_of(p99)
    period = float(table["period"].iloc[0])
    reference_quota = float(table["quota"].max())
    reference = p99.loc[p99["quota"] == reference_quota, "value"]
    below, above, evidence = [], [], []
    quotas = [
        q
        for q in sorted(float(q) for q in table["quota"] if float(q) != reference_quota)
        if not needed * 0.8 < 100 * q / period < needed * 1.25  # too close to the server's need to expect either
    ]
    for quota in quotas:
        share = 100 * quota / period
        values = p99.loc[p99["quota"] == quota, "value"]
        ratio, low, high, _, _ = log_ratio_interval(values, reference, alpha)
        collapsed = "yes" if low > COLLAPSE_FACTOR else "no" if high < COLLAPSE_FACTOR else "undecided"
        if collapsed != "undecided" and (collapsed == "yes") != (share < needed):
            collapsed = _contradicted(values, reference, alpha / len(quotas), collapsed)
        (below if share < needed else above).append((quota, ratio, low, high, collapsed))
        evidence.append(f"{quota:.0f} µs ({share:.0f}%): p99 × {ratio:.2g} [{low:.2g}, {high:.2g}]")
    if not below or not above:
        return Verdict(
            NOT_TESTABLE,
            f"the sweep has no quota well {'below' if not below else 'above'} the server's need "
            f"({needed:.0f}% of a core unthrottled)",
            n=n,
        )
    head = (
        f"server needs {needed:.0f}% of a core; p99 against the largest quota, {sequential.level_text(alpha)} CI "
        "(Welch t on log values): "
        + "; ".join(evidence)
        + f"; the claim: collapsed (> {COLLAPSE_FACTOR:g}×) below 80% of the need, not collapsed above 125%"
    )
    wrong = [q for q, *_, c in below if c == "no"] + [q for q, *_, c in above if c == "yes"]
    undecided = [q for q, *_, c in below + above if c not in ("yes", "no")]
    held = [f"{q:.0f} µs ({c})" for q, *_, c in below + above if c not in ("yes", "no", "undecided")]
    if held:
        head += f"; on the wrong side at its own level, not at α/{len(quotas)}: " + "; ".join(held)
    if wrong or held:
        head += f"; {CONTRADICTED_RULE} (here m = {len(quotas)})"
    closest = max(below, key=lambda item: item[0])
    common = dict(ratio=closest[1], ci_low=closest[2], ci_high=closest[3], n=n, alpha=alpha)
    if wrong:
        return Verdict(NOT_REPRODUCED, f"{head}: contradicted at {', '.join(f'{q:.0f}' for q in wrong)} µs", **common)
    if undecided:
        return Verdict(
            INCONCLUSIVE, f"{head}: undecided at {', '.join(f'{q:.0f}' for q in undecided)} µs; more runs", **common
        )
    return Verdict(REPRODUCED, f"{head}: every interval lies on its side", **common)


def _bridge_fixed_offset(df: pd.DataFrame) -> Verdict:
    """Offset part: its interval above 0. Size part: the change across the sizes measured (slope × range)
    within ±BRIDGE_FIXED_US, a band fixed by the paper's numbers, never by these records. Both must hold."""

    rows = df[(df["experiment"] == "latency") & (df["workload"] == "bridge") & (df["metric"] == "latency_mean")]
    table = latency_analysis.bridge_table(df[df["experiment"] == "latency"]) if not rows.empty else pd.DataFrame()
    alpha = sequential.alpha_of(rows)
    fit = latency_analysis.bridge_fit(table, alpha) if not table.empty else None
    if fit is None or fit.n < 3:
        return missing("bridge vs host runs at 3 or more sizes")
    n = _runs_per_env(rows, [c for c in ("direction", "size_kb") if c in rows.columns])
    sizes = table["size_kb"].astype(float)
    span = float(sizes.max() - sizes.min())
    slope_ci = sorted((fit.slope_ci[0] * span, fit.slope_ci[1] * span))
    # the fit's intervals rest on the per-size means; runs per size set whether they may decide
    line = f"line through {fit.n} sizes"
    base = Effect(fit.offset_us, *fit.offset_ci, math.nan, n, line, "difference", alpha=alpha)
    size = Effect(
        fit.slope_us_per_kb * span, *slope_ci, math.nan, n, f"slope × {span:.0f} KB", "difference", alpha=alpha
    )
    return all_of(
        "fixed offset and no size effect",
        lambda _df: decide(base, BRIDGE_OFFSET, "bridge − host at size 0"),
        lambda _df: decide(size, BRIDGE_SIZE, "size-dependent change"),
    )(df)


BRIDGE_OFFSET = Band(0.0, math.inf, "bridge − host offset above 0 (µs)")
BRIDGE_SIZE = Band(-BRIDGE_FIXED_US, BRIDGE_FIXED_US, "change across the sizes within ±10 µs")


def _storage(operation: str, band: Band):
    """Overlay against a volume for one file operation, every size by itself."""

    def predicate(df: pd.DataFrame) -> Verdict:
        rows = df[(df["experiment"] == "latency") & (df["workload"] == "storage") & (df["operation"] == operation)]
        if rows.empty:
            return missing(f"latency storage runs of {operation}")
        return compare("latency", "latency_mean", exact("docker-host-overlay"), "docker-host-volume", band)(rows)

    return predicate


def _growth(workload: str, x: str, env: str, subject: str):
    def predicate(df: pd.DataFrame) -> Verdict:
        rows = df[(df["experiment"] == "latency") & (df["workload"] == workload)] if "workload" in df else df.iloc[0:0]
        rows = rows[(rows["metric"] == "latency_mean") & (rows["env"] == env)] if not rows.empty else rows
        if rows.empty or x not in rows.columns:
            return missing(f"latency {workload} runs on {env}")
        return slope_above_zero(rows, x, subject)

    return predicate


OPEN = Band(1.20, math.inf, "over 20% slower")
SHARES = stated_ratio(1.06)
EVERY = f"; {RULE_EVERY}"


def _claim(name, source, statement, predicate, quote, band, rule, kind=None) -> Claim:
    return Claim(
        name, source, statement, predicate, seed="004", quote=quote, band=str(band), rule=rule, kind=kind or "paper"
    )


CLAIMS: list[Claim] = [
    _claim(
        "quota_cliff",
        f"{SOURCE}, §3.2.3, Table 2, Fig. 2",
        "A CPU quota below the server's CPU use collapses the tail latency; above it, no effect",
        _latency_quota_cliff,
        "This can cause a very long tail latency in real time services, which is shown as a sudden rise in the "
        "99th-percentile",
        f"p99 over {COLLAPSE_FACTOR:g}× the unthrottled p99 below 80% of the need; under it above 125%",
        f"derived: 'a sudden rise' read as over {COLLAPSE_FACTOR:g}× the unthrottled p99 (Table 2: 5.2× at 3000 µs, "
        "the first quota at the need, 22.7× at 1000 µs); 'low impact' above the need as under it; quotas within "
        "80–125% of the need are left undecided",
        DERIVED,
    ),
    _claim(
        "bridge_cost_fixed_offset",
        f"{SOURCE}, §3.3, Fig. 3",
        "The bridge adds a fixed latency per request, not a share proportional to message size",
        _bridge_fixed_offset,
        "It only adds a fixed latency to each trip",
        f"offset {BRIDGE_OFFSET}; size {BRIDGE_SIZE}",
        f"the offset above 0 ({RULE_DIRECTION}); 'fixed' as a change across the sizes within ±{BRIDGE_FIXED_US:g} µs: "
        "half the fixed cost the paper implies ('nearly 10%' of 'over 200 us', about 20 µs)",
    ),
    _claim(
        "overlay_slows_open",
        f"{SOURCE}, §5, Fig. 5",
        "The image's union filesystem (overlay here, AUFS in the paper) makes opening a file over 20% slower",
        _storage("open", OPEN),
        "it can cause a huge extra latency (over 20%)",
        OPEN,
        f"'over 20%' bounds the ratio at 1.20; {RULE_BOUND}",
    ),
    _claim(
        "overlay_write_unaffected",
        f"{SOURCE}, §3.4, Fig. 4",
        "Writing to an open file costs the same on overlay as on a volume, at every write size (within ±5%)",
        _storage("write", EQUAL),
        "there is almost no impact on performance using AUFS when writing files",
        EQUAL,
        f"'almost no impact'; {RULE_EQUAL}{EVERY} (each write size)",
    ),
    _claim(
        "layers_slow_directory_walk",
        f"{SOURCE}, §3.4, Fig. 6",
        "A recursive listing (ls -R) takes longer the more image layers hide the directory",
        _growth("layers", "layers", "docker-host-overlay", "ls -R time against layers"),
        "with the increment of the number of layers, latency is increasing too",
        Band(0.0, math.inf, "slope above 0"),
        f"{RULE_DIRECTION}; the text's 'almost linear except for some vibration' gives no bound on the "
        "vibration, so the line's shape is not decided",
    ),
    _claim(
        "copy_up_grows_with_file_size",
        f"{SOURCE}, §3.4",
        "The first write to a lower-layer file on overlay takes longer the larger the file",
        _growth("copy_up", "size_mb", "docker-host-overlay", "first write against file size"),
        "the larger the original file is, the longer the operation latency will be",
        Band(0.0, math.inf, "slope above 0"),
        RULE_DIRECTION,
    ),
    _claim(
        "docker_shares_near_native_latency",
        f"{SOURCE}, §3.2.2, Table 1",
        "Docker with CPU shares adds about 6% to the mean, median and p99 request latency (1.045–1.075×)",
        all_of(
            "mean, median and p99",
            *(
                compare("latency", metric, kind("docker", "shares"), "native", SHARES, workload="shares")
                for metric in ("latency_mean", "latency_median", "latency_p99")
            ),
        ),
        "about 6% about the mean, median, and 99th-percentile performance in our research",
        SHARES,
        f"'about 6%' is a ratio of 1.06, of each of the three statistics; {RULE_STATED}",
    ),
]
