"""The A/A control: an environment measured twice in one run (`native` and `native+replica`).

Both series are the same configuration, so their ratio differs from 1 only by the machine's noise;
its interval is the noise floor every A/B effect of the run should be read against. In a duet run the
replica ran beside the original in duets of their own, so the floor is the paired one of the design:
the within-duet log ratios, one sample per duet (`design` says which).
"""

from __future__ import annotations

import pandas as pd

from kitlib.analyse import analysis
from kitlib.core import stats
from kitlib.specs.labels import replicated


def aa_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per host, `+replica` environment, metric and configuration: replica/original ratio of means, its
    95% interval and p from Welch's t on the logarithms, and the interval's half-width in % (the noise floor)."""
    columns = [
        "host",
        "experiment",
        "workload",
        "env",
        "replicates",
        "metric",
        "config",
        "ratio",
        "ci_low",
        "ci_high",
        "p_value",
        "n",
        "noise_pct",
        "design",
    ]
    if df.empty or "env" not in df.columns:
        return pd.DataFrame(columns=columns)
    pairs = {env: replicated(env) for env in df["env"].unique() if replicated(env)}
    by = [c for c in analysis.dimensions(df) if c not in ("env", "unit")]
    found = []
    for env, original in pairs.items():
        part = df[df["env"].isin([env, original])]
        for key, group in part.groupby(by, dropna=False):
            values = group.loc[group["env"] == env, "value"]
            baseline = group.loc[group["env"] == original, "value"]
            if values.empty or baseline.empty:
                continue
            paired = duet_pairs(group, env, original)
            if paired is not None:
                ratio, low, high, p, _ = stats.paired_log_interval(*paired)
                verdict = "significant" if p < stats.ALPHA else "not significant"
                n = len(paired[0])
                result = stats.Comparison(ratio, low, high, p, "paired t within duets", n, n, verdict)
            else:
                result = stats.compare_samples(values, baseline)
            config = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
            found.append(
                {
                    "host": config.pop("host", None),
                    "experiment": config.pop("experiment", None),
                    "workload": config.pop("workload", None),
                    "env": env,
                    "replicates": original,
                    "metric": config.pop("metric"),
                    "config": ", ".join(f"{k}={v}" for k, v in config.items() if pd.notna(v)),
                    "ratio": result.ratio,
                    "ci_low": result.ci_low,
                    "ci_high": result.ci_high,
                    "p_value": result.p_value,
                    "n": result.n,
                    "noise_pct": 100 * max(abs(result.ci_high - 1), abs(1 - result.ci_low)),
                    "design": "duet" if paired is not None else "one at a time",
                }
            )
    return pd.DataFrame(found, columns=columns)


def duet_pairs(group: pd.DataFrame, env: str, original: str) -> tuple[pd.Series, pd.Series] | None:
    """The replica's and the original's values of the duets holding both (positive values, at least 2
    duets), aligned; None where the records are not duet points."""
    if "duet" not in group.columns or group["duet"].isna().any() or "run_id" not in group.columns:
        return None
    duet = group["run_id"].astype(str) + " | " + group["duet"].astype(str)
    values = group[group["env"] == env].groupby(duet)["value"].mean()
    baseline = group[group["env"] == original].groupby(duet)["value"].mean()
    common = values.index.intersection(baseline.index)
    if len(common) < 2 or (values[common] <= 0).any() or (baseline[common] <= 0).any():
        return None
    return values[common], baseline[common]


def failed_duet_floor(records: pd.DataFrame) -> list[str]:
    """The A/A duets of `records` whose replica differs from its original, each named with its ratio: the
    design's floor failing on this host. Every metric of a workload is one more test, so each is held to
    α divided by their number (Bonferroni): one of many A/A rows under α by chance fails nothing."""
    table = aa_table(records)
    table = table[(table["design"] == "duet") & table["p_value"].notna()]
    if table.empty:
        return []
    level = stats.ALPHA / len(table)
    return [
        f"{row.workload} {row.metric} {row.env} / {row.replicates} {row.ratio:.3f} "
        f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
        for row in table.itertuples()
        if row.p_value < level
    ]
