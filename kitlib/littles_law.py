"""Little's law for closed-loop runs: outstanding requests N ≈ throughput X × mean latency R.

A closed-loop client keeps N requests in flight (clients × pipeline for Redis, threads for MySQL,
1 for request-response), so X·R should come back to N. Where it does not, the measurement
itself says something: X·R well below N means requests waited in the client where the latency
timer did not see them (or the load generator saturated); X·R above N means more requests in
flight than the client can have, i.e. a broken measurement.
"""

from __future__ import annotations

import pandas as pd

TOLERANCE = 0.15
#: latency unit -> seconds
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
#: workload -> (throughput metric, latency metric, how N is computed)
CLOSED_LOOPS = {
    "redis": ("throughput", "latency_mean", "clients × pipeline"),
    "oltp_read_write": ("tps", "latency_mean", "threads"),
    "rr": ("transaction_rate", "rtt_mean", "1"),
    "shares": ("throughput", "latency_mean", "1"),
    "quota": ("throughput", "latency_mean", "1"),
    "bridge": ("throughput", "latency_mean", "1"),
}


def outstanding(row: pd.Series) -> float:
    rule = CLOSED_LOOPS[row["workload"]][2]
    if rule == "clients × pipeline":
        return float(row["clients"]) * float(row["pipeline"])
    if rule == "threads":
        return float(row["threads"])
    return 1.0


def check(df: pd.DataFrame, tolerance: float = TOLERANCE) -> pd.DataFrame:
    """One row per closed-loop point and run: N, X, R, X·R, relative error, flag and likely cause."""
    rows = []
    for workload, (x_metric, r_metric, _) in CLOSED_LOOPS.items():
        part = df[df["workload"] == workload]
        if part.empty:
            continue
        if "op" in part.columns and part["op"].notna().any():
            part = part[part["op"] == "mix"]
        keys = [
            c
            for c in (
                "experiment",
                "workload",
                "env",
                "run_id",
                "repetition",
                "clients",
                "pipeline",
                "threads",
                "size_kb",
                "direction",
                "protocol",
            )
            if c in part.columns and part[c].notna().any()
        ]
        x = part[part["metric"] == x_metric].set_index(keys)["value"].rename("X")
        r = part[part["metric"] == r_metric]
        r_seconds = (r.set_index(keys)["value"] * r.set_index(keys)["unit"].map(_SECONDS)).rename("R_seconds")
        joined = pd.concat([x, r_seconds], axis=1, join="inner").reset_index()
        for _, row in joined.iterrows():
            n = outstanding(row)
            xr = row["X"] * row["R_seconds"]
            error = (xr - n) / n
            rows.append(
                {
                    **{k: row[k] for k in keys},
                    "N": n,
                    "X": row["X"],
                    "R_us": row["R_seconds"] * 1e6,
                    "XR": xr,
                    "relative_error": error,
                    "flagged": abs(error) > tolerance,
                    "likely_cause": cause(error, tolerance),
                }
            )
    return pd.DataFrame(rows)


def cause(relative_error: float, tolerance: float = TOLERANCE) -> str:
    if relative_error < -tolerance:
        return (
            "X·R below N: requests queued in the client where the latency timer does not see them, "
            "or the load generator saturated"
        )
    if relative_error > tolerance:
        return "X·R above N: more requests in flight than the client can have; a broken measurement"
    return ""
