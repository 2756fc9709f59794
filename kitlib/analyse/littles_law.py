"""Little's law for closed-loop runs: outstanding requests N ≈ throughput X × mean latency R (with think
time Z between a user's requests, as in the web tier: N ≈ X × (R + Z)).

A closed-loop client keeps N requests in flight (Redis: connections × pipeline; MySQL: threads;
request-response: 1), so X·R should come back to N. Where it does not, the measurement itself says
something: X·R well below N means requests waited in the client where the latency timer did not see
them (or the load generator saturated); X·R above N means more requests in flight than the client
can have, i.e. a broken measurement. Which workloads are closed loops, their metrics and the column
that records N are declared by each experiment's schema.
"""

from __future__ import annotations

import pandas as pd

from kitlib import specs

TOLERANCE = 0.15
#: where a point counts its requests (the web tier), X is that count over the window, and the count of
#: a window holding n requests varies by about 1/√n by itself: a point is flagged only beyond this many
#: of those standard errors too, so that 43 requests (±15% by counting alone) are no broken measurement
COUNTING_SIGMAS = 3.0
#: latency unit -> seconds
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def check(df: pd.DataFrame, tolerance: float = TOLERANCE) -> pd.DataFrame:
    """One row per closed-loop point and run: N, X, R, X·R, relative error, the requests counted (where
    the point counts them), the tolerance that applies, flag and likely cause."""
    rows = []
    for (experiment, workload), part in df.groupby(["experiment", "workload"], sort=True) if not df.empty else []:
        schema = specs.schema(str(experiment))
        declared = schema.workload(str(workload))
        loop = declared.closed_loop
        if loop is None:
            continue
        part = schema.headline_rows(part)
        declared_columns = (declared.sweep, *declared.series, loop.outstanding, *loop.think)
        point = [c for c in declared_columns if c and c in part.columns and part[c].notna().any()]
        if loop.outstanding and loop.outstanding not in point:
            continue  # records that do not say how many requests were in flight cannot be checked
        host = ["host"] if "host" in part.columns else []  # two machines' runs never meet in one point
        keys = ["experiment", "workload", "env", *host, "run_id", "repetition", *dict.fromkeys(point)]
        x = part[part["metric"] == loop.throughput].set_index(keys)["value"].rename("X")
        r = part[part["metric"] == loop.latency].set_index(keys)
        r_seconds = (r["value"] * r["unit"].map(_SECONDS)).rename("R_seconds")
        counted = part[part["metric"] == "requests"].set_index(keys)["value"].rename("requests")
        joined = pd.concat([x, r_seconds], axis=1, join="inner")
        joined = joined.join(counted[~counted.index.duplicated()], how="left").reset_index()
        if any(c not in point for c in loop.think):
            continue  # records that do not say how long the users thought cannot be checked
        for _, row in joined.iterrows():
            n = float(row[loop.outstanding]) if loop.outstanding else 1.0
            z = sum(float(row[c]) for c in loop.think) / len(loop.think) if loop.think else 0.0
            xr = row["X"] * (row["R_seconds"] + z)
            error = (xr - n) / n
            allowed = tolerance
            if pd.notna(row["requests"]) and row["requests"] > 0:
                allowed = max(tolerance, COUNTING_SIGMAS / float(row["requests"]) ** 0.5)
            rows.append(
                {
                    **{k: row[k] for k in keys},
                    "N": n,
                    "X": row["X"],
                    "R_us": row["R_seconds"] * 1e6,
                    "Z_s": z,
                    "XR": xr,
                    "relative_error": error,
                    "requests": row["requests"],
                    "tolerance": allowed,
                    "flagged": abs(error) > allowed,
                    "likely_cause": cause(error, allowed),
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
