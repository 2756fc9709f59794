"""The achieved operation mix of the web tier against its target: each point's request counts per
operation set beside the shares its users drew from (`target_share_pct`, recorded with every operation).

Each user draws its operation at random with the target's weights, so the counts of a point follow a
multinomial law: a chi-square goodness-of-fit test says whether they could come from the target. A
point flagged at `ALPHA` drew another mix than asked (a failing operation retried, a user stuck), which
the latency per operation then also reflects.
"""

from __future__ import annotations

import pandas as pd
from scipy import stats as sps

#: a point's counts are flagged when the chance of a mix this far off the target is below this
ALPHA = 0.001


def check(records: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per point and run: requests, the largest gap between an operation's achieved and target
    share (percentage points), the chi-square p-value and whether the mix is flagged."""
    needed = {"operation", "target_share_pct"}
    if records.empty or not needed <= set(records.columns):
        return pd.DataFrame(columns=["env", "users", "run_id", "repetition", "requests", "largest_gap_pp", "p_value"])
    counts = records[(records["metric"] == "requests") & records["target_share_pct"].notna()]
    host = ["host"] if "host" in counts.columns else []
    # scaled out, each instance's users drew their own mix
    instance = ["instance"] if "instance" in counts.columns and counts["instance"].notna().any() else []
    keys = [*host, "env", "users", "run_id", "repetition", *instance]
    rows = []
    for key, point in counts.groupby(keys, sort=True):
        observed = point["value"].to_numpy(dtype=float)
        total = observed.sum()
        target = point["target_share_pct"].to_numpy(dtype=float)
        if total <= 0:
            continue
        expected = total * target / target.sum()
        drawn = expected > 0
        p_value = float(sps.chisquare(observed[drawn], expected[drawn]).pvalue) if drawn.sum() > 1 else float("nan")
        gap = 100 * observed / total - 100 * target / target.sum()
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "requests": int(total),
                "largest_gap_pp": float(abs(gap).max()),
                "p_value": p_value,
                "flagged": bool(p_value < alpha) or bool((observed[~drawn] > 0).any()),
            }
        )
    return pd.DataFrame(rows)
