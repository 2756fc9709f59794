"""Little's law on synthetic closed-loop data with known answers, and on real Redis records."""

from __future__ import annotations

import pandas as pd
import pytest

from kitlib.analyse import littles_law


def redis_rows(clients: int, throughput: float, latency_us: float) -> list[dict]:
    common = {
        "experiment": "redis",
        "workload": "redis",
        "env": "native",
        "run_id": "x",
        "repetition": 0,
        "clients": clients,
        "pipeline": 10,
        "outstanding": clients * 10,  # N as the Redis experiment records it
        "op": "mix",
    }
    return [
        {**common, "metric": "throughput", "value": throughput, "unit": "req/s"},
        {**common, "metric": "latency_mean", "value": latency_us, "unit": "us"},
    ]


def test_exact_closed_loop_passes_and_broken_points_are_flagged():
    # N = 4 × 10 = 40 in flight; 100k req/s × 400 µs = 40 exactly
    df = pd.DataFrame(redis_rows(4, 100_000, 400) + redis_rows(8, 100_000, 400) + redis_rows(2, 100_000, 400))
    table = littles_law.check(df).set_index("clients")
    assert table.loc[4, "relative_error"] == pytest.approx(0.0)
    assert not table.loc[4, "flagged"]
    assert table.loc[8, "relative_error"] == pytest.approx(-0.5)  # latency timer missed queued requests
    assert table.loc[8, "flagged"] and "client" in table.loc[8, "likely_cause"]
    assert table.loc[2, "relative_error"] == pytest.approx(1.0)
    assert "broken measurement" in table.loc[2, "likely_cause"]


def test_threads_and_units_for_mysql():
    common = {
        "experiment": "mysql",
        "workload": "oltp_read_write",
        "env": "native",
        "run_id": "x",
        "repetition": 0,
        "threads": 8,
    }
    df = pd.DataFrame(
        [
            {**common, "metric": "tps", "value": 400.0, "unit": "transactions/s"},
            {**common, "metric": "latency_mean", "value": 20.0, "unit": "ms"},
        ]
    )
    row = littles_law.check(df).iloc[0]
    assert row["N"] == 8 and row["XR"] == pytest.approx(8.0) and not row["flagged"]


def test_real_redis_capture_shows_client_queuing():
    from kitlib.measure.experiments.redis import mix_of_phases
    from kitlib.measure.parsers import parse_file
    from tests.conftest import DATA

    found = parse_file("redis-benchmark", DATA / "redis-benchmark" / "set-c8-p10.csv")
    found += parse_file("redis-benchmark", DATA / "redis-benchmark" / "get-c8-p10.csv")
    mix = {m.metric: m.value for m in mix_of_phases(found)}
    df = pd.DataFrame(redis_rows(8, mix["throughput"], mix["latency_mean"]))
    row = littles_law.check(df).iloc[0]
    assert row["N"] == 80
    # this capture ran client and server on one loopback host: X·R = 54 of 80, the client queued
    assert row["relative_error"] == pytest.approx(-0.3255, abs=1e-3)
    assert row["flagged"] and "queued in the client" in row["likely_cause"]
