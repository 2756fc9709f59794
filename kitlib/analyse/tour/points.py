"""Selections of records the chapters, their sentences and their exercises share."""

from __future__ import annotations

import pandas as pd

from kitlib import specs
from kitlib.analyse.figures.style import env_order
from kitlib.core import stats


def rows(df: pd.DataFrame, **equal) -> pd.DataFrame:
    """The records whose columns equal the given values (a column missing from the records matches none)."""
    for column, value in equal.items():
        df = df[df[column] == value] if column in df.columns else df.iloc[0:0]
    return df


def mean(df: pd.DataFrame, **equal) -> float:
    found = rows(df, **equal)
    if found.empty:
        raise KeyError(f"no records with {equal}")
    return float(found["value"].mean())


def redis(df: pd.DataFrame) -> pd.DataFrame:
    """Redis's records that stand for a point (the SET+GET mix, as the experiment declares)."""
    return specs.schema("redis").headline_rows(df[df["experiment"] == "redis"])


def redis_values(df: pd.DataFrame, env: str, metric: str, clients: int) -> pd.Series:
    return rows(redis(df), env=env, metric=metric, clients=clients)["value"]


def redis_mean(df: pd.DataFrame, env: str, metric: str, clients: int) -> float:
    return mean(redis(df), env=env, metric=metric, clients=clients)


def redis_ratios(df: pd.DataFrame, metric: str = "throughput") -> pd.DataFrame:
    """Each Redis environment against native per connection count: ratio, 95% interval, verdict."""
    found = redis(df)
    found = found[found["metric"] == metric]
    table = []
    for env in [e for e in env_order(found) if e != "native"]:
        for clients in sorted(found["clients"].unique()):
            mine = found[(found["env"] == env) & (found["clients"] == clients)]["value"]
            native = found[(found["env"] == "native") & (found["clients"] == clients)]["value"]
            result = stats.compare_samples(mine, native)
            table.append({"env": env, "clients": clients, "ratio": result.ratio, "low": result.ci_low,
                          "high": result.ci_high, "verdict": result.verdict})  # fmt: skip
    return pd.DataFrame(table, columns=["env", "clients", "ratio", "low", "high", "verdict"])


def redis_latency(df: pd.DataFrame) -> pd.DataFrame:
    """Chapter 1's table: Redis's mean latency at the fewest connections per environment (mean, sd, runs)."""
    rows = redis(df)
    rows = rows[rows["metric"] == "latency_mean"]
    if rows.empty:
        return pd.DataFrame(columns=["env", "mean", "std", "count"])
    rows = rows[rows["clients"] == rows["clients"].min()]
    return rows.groupby("env")["value"].agg(["mean", "std", "count"]).reset_index()
