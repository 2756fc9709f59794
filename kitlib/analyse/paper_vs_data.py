"""Where a paper's text and its authors' own data disagree: the numbers the text states
(`data/reference/*.csv`) beside the effects the kit's claims find in the imported raw outputs.

Only numbers that measure the same thing are set side by side: a ratio to native against a claim whose
effect is that environment over native. A stated ratio outside the authors' 95% interval disagrees; an
upper bound ("higher than 40%") disagrees when the whole interval lies beyond it; a verdict of "not
reproduced" on the authors' data is a disagreement of the text's band with them. Without an interval
(fewer than 3 runs a side) nothing is decided and both numbers are shown as such.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from kitlib.analyse import reference

AGREE, DISAGREE, UNDECIDED = "agree", "disagree", "undecided"
COLUMNS = [
    "claim",
    "section",
    "quote",
    "stated",
    "unit",
    "comparison",
    "pair",
    "effect",
    "ci_low",
    "ci_high",
    "n",
    "status",
    "why",
]
_PAIR = re.compile(r"^([\w+.-]+) (?:/|vs) ([\w+.-]+)(?::| at )")


def pair_of(reason: str) -> tuple[str, str] | None:
    """(subject, baseline) of a verdict's first comparison, from its evidence (`kvm / native: …`)."""
    text = str(reason)
    text = text.split("each must hold: ", 1)[-1]
    found = _PAIR.match(text)
    return (found.group(1), found.group(2)) if found else None


def compare(verdicts: pd.DataFrame, host: str, rows: pd.DataFrame | None = None, study: str = "Felter") -> pd.DataFrame:
    """One row per number the study's text states (reference rows whose study starts with `study`) for a
    claim the host's records decide or leave undecided."""
    rows = reference.load() if rows is None else rows
    rows = rows[rows["study"].astype(str).str.startswith(study)]
    mine = verdicts[verdicts["host"] == host].set_index("claim")
    found = []
    for ref in rows.itertuples():
        if ref.claim not in mine.index:
            continue
        verdict = mine.loc[ref.claim]
        if verdict["status"] == "not testable here":
            continue
        pair = pair_of(verdict["reason"])
        base = {
            "claim": ref.claim,
            "section": f"{ref.study}, {ref.section}",
            "quote": ref.quote,
            "stated": ref.value,
            "unit": ref.unit,
            "comparison": ref.comparison,
            "pair": " / ".join(pair) if pair else "",
            "effect": verdict["ratio"],
            "ci_low": verdict["ci_low"],
            "ci_high": verdict["ci_high"],
            "n": int(verdict["n"]),
        }
        if verdict["status"] == "not reproduced":
            found.append({**base, "status": DISAGREE, "why": f"the text's band excludes the data: {verdict['reason']}"})
            continue
        if ref.comparison not in ("ratio_to_native", "ratio_to_native_upper_bound") or not pair or pair[1] != "native":
            continue
        low, high = verdict["ci_low"], verdict["ci_high"]
        if not (math.isfinite(low) and math.isfinite(high)):
            found.append({**base, "status": UNDECIDED, "why": f"{base['n']} run(s) a side: no interval"})
            continue
        if ref.comparison == "ratio_to_native":
            status = AGREE if low <= ref.value <= high else DISAGREE
            why = f"the stated ratio {ref.value:g} lies {'inside' if status == AGREE else 'outside'} the data's 95% CI"
        else:
            status = DISAGREE if low > ref.value else AGREE if high <= ref.value else UNDECIDED
            why = f"stated upper bound {ref.value:g}; the data's 95% CI {low:.3g}..{high:.3g}"
        found.append({**base, "status": status, "why": why})
    return pd.DataFrame(found, columns=COLUMNS)


def markdown(table: pd.DataFrame, host: str) -> list[str]:
    """The summary's section: every disagreement with both numbers, then what could not be decided."""
    lines = [f"## Where the paper's text and the authors' data disagree (host `{host}`)", ""]
    if table.empty:
        return lines + ["(no stated number of a claim these records decide)", ""]
    for status, head in ((DISAGREE, "Disagree"), (UNDECIDED, "Not decided (no interval)")):
        part = table[table["status"] == status]
        if part.empty:
            continue
        lines += [
            f"**{head}**",
            "",
            "| claim | the text | stated | the authors' data (95% CI, runs a side) | why |",
            "|---|---|---|---|---|",
        ]
        for r in part.itertuples():
            ci = f" [{r.ci_low:.3g}, {r.ci_high:.3g}]" if math.isfinite(r.ci_low) else ""
            quote = str(r.quote).replace("|", "/")
            data = f"{r.pair} = {r.effect:.3g}{ci}, n = {r.n}"
            why = str(r.why).replace("|", "/")
            stated = f"{r.stated:g}" if r.unit == "ratio" else f"{r.stated:g} {r.unit}"
            lines.append(f"| {r.claim} | {r.section}: “{quote}” | {stated} | {data} | {why} |")
        lines.append("")
    return lines
