"""The A/A control: an environment measured twice in one run (`native` and `native+replica`).

Both series are the same configuration, so their ratio differs from 1 only by the machine's noise;
its interval is the noise floor every A/B effect of the run should be read against.
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
                }
            )
    return pd.DataFrame(found, columns=columns)
