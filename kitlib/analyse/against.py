"""A claim's effect on one host beside another's (the user's beside the authors'), with the interval of
their difference.

Each host's verdict carries its effect, its 95% interval and p-value (Welch's t, on logarithms for a
ratio). The standard error and the degrees of freedom behind that interval are recovered from those
three numbers (the interval's half-width is t(df)·se and the p-value 2·P(T_df > |effect|/se): one df
satisfies both); where the p-value cannot pin them (an effect of exactly 0, a level without a p-value,
a p-value at 0 or 1), df = n − 1, the fewest a Welch interval on n runs a side can have. The two
effects' difference (of log-ratios for ratios) then gets a Welch interval: se = √(se₁² + se₂²), df by
Welch–Satterthwaite. A ratio's difference is shown back on the ratio scale: the user's ratio divided by
the authors' (1 = the same effect).
"""

from __future__ import annotations

import math
import re

import pandas as pd
from scipy import optimize
from scipy import stats as sps

ALPHA = 0.05
_SCALE = re.compile(r": (ratio|difference|mean) [-0-9.]")
COLUMNS = [
    "claim",
    "host",
    "effect",
    "ci_low",
    "ci_high",
    "n",
    "reference_host",
    "reference_effect",
    "reference_ci_low",
    "reference_ci_high",
    "reference_n",
    "scale",
    "difference",
    "difference_low",
    "difference_high",
    "note",
]


def scale_of(reason: str) -> str | None:
    """ratio, difference or mean: the kind of effect a verdict's evidence names first."""
    found = _SCALE.search(str(reason))
    return {"mean": "level"}.get(found.group(1), found.group(1)) if found else None


def spread(
    effect: float, low: float, high: float, p: float, n: int, scale: str, alpha: float = ALPHA
) -> tuple[float, float] | None:
    """(standard error, degrees of freedom) of an effect on its estimation scale, None without an interval;
    `alpha` is the error rate its interval was computed at (a sequential run's is smaller than 0.05)."""
    if n < 2 or not all(math.isfinite(x) for x in (effect, low, high)):
        return None
    if scale == "ratio":
        if min(effect, low, high) <= 0:
            return None
        centre, half = math.log(effect), (math.log(high) - math.log(low)) / 2
    else:
        centre, half = effect, (high - low) / 2
    if half <= 0:
        return None
    df = float(max(1, n - 1))
    if math.isfinite(p) and 0 < p < 1 and centre != 0:

        def gap(d: float) -> float:
            return 2 * sps.t.sf(abs(centre) * sps.t.ppf(1 - alpha / 2, d) / half, d) - p

        try:
            if gap(1.0) * gap(1e6) < 0:
                df = optimize.brentq(gap, 1.0, 1e6)
        except (ValueError, RuntimeError):
            pass
    return half / float(sps.t.ppf(1 - alpha / 2, df)), df


def difference(mine: pd.Series, theirs: pd.Series) -> dict[str, object]:
    """The user's effect against the reference's: point and 95% Welch interval (a ratio of ratios)."""
    scale = scale_of(mine["reason"]) or scale_of(theirs["reason"])
    out: dict[str, object] = {
        "scale": scale,
        "difference": math.nan,
        "difference_low": math.nan,
        "difference_high": math.nan,
    }
    if scale is None or not (math.isfinite(mine["ratio"]) and math.isfinite(theirs["ratio"])):
        out["note"] = "an effect is missing on one side"
        return out
    to = math.log if scale == "ratio" else float
    back = math.exp if scale == "ratio" else float
    try:
        point = to(mine["ratio"]) - to(theirs["ratio"])
    except ValueError:
        out["note"] = "a ratio that is not positive"
        return out
    out["difference"] = back(point)
    a, b = (
        spread(v["ratio"], v["ci_low"], v["ci_high"], v["p_value"], int(v["n"]), scale, float(v.get("alpha", ALPHA)))
        for v in (mine, theirs)
    )
    if a is None or b is None:
        out["note"] = (
            "no interval on "
            + ("either side" if a is None and b is None else "this host" if a is None else "the reference")
            + " (fewer than 3 runs a side)"
        )
        return out
    (sa, da), (sb, db) = a, b
    se = math.sqrt(sa**2 + sb**2)
    df = (sa**2 + sb**2) ** 2 / (sa**4 / da + sb**4 / db)
    half = float(sps.t.ppf(1 - ALPHA / 2, df)) * se
    out.update(difference_low=back(point - half), difference_high=back(point + half))
    what = "ratio of the two ratios" if scale == "ratio" else "difference of the two effects"
    crosses = (point - half) <= 0 <= (point + half)
    out["note"] = f"{what}, Welch df {df:.1f}: " + (
        "the two hosts agree within the interval" if crosses else "the hosts differ"
    )
    return out


def against(verdicts: pd.DataFrame, reference_host: str) -> pd.DataFrame:
    """For each claim and each host other than the reference: the two effects and their difference.
    `verdicts` is `claims.evaluate_all` on records of both hosts."""
    reference = verdicts[verdicts["host"] == reference_host].set_index("claim")
    if reference.empty:
        hosts = ", ".join(sorted(verdicts["host"].astype(str).unique())) or "none"
        raise LookupError(f"no records of host {reference_host!r} (hosts here: {hosts})")
    rows = []
    for _, mine in verdicts[verdicts["host"] != reference_host].iterrows():
        if mine["claim"] not in reference.index:
            continue
        theirs = reference.loc[mine["claim"]]
        row = {
            "claim": mine["claim"],
            "host": mine["host"],
            "effect": mine["ratio"],
            "ci_low": mine["ci_low"],
            "ci_high": mine["ci_high"],
            "n": mine["n"],
            "reference_host": reference_host,
            "reference_effect": theirs["ratio"],
            "reference_ci_low": theirs["ci_low"],
            "reference_ci_high": theirs["ci_high"],
            "reference_n": theirs["n"],
            "note": "",
        }
        if mine["status"] == "not testable here" or theirs["status"] == "not testable here":
            side = "this host" if mine["status"] == "not testable here" else reference_host
            row.update(scale=None, difference=math.nan, difference_low=math.nan, difference_high=math.nan)
            row["note"] = f"not testable on {side}"
        else:
            row.update(difference(mine, theirs))
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
