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


def webtier_rows(users: int, requests: float, window_s: float, latency_ms: float) -> list[dict]:
    common = {
        "experiment": "webtier",
        "workload": "cloudstone",
        "env": "native",
        "run_id": "x",
        "repetition": 0,
        "users": users,
        "think_min_s": 1.0,
        "think_max_s": 3.0,
        "operation": "Aggregated",
    }
    return [
        {**common, "metric": "throughput", "value": requests / window_s, "unit": "req/s"},
        {**common, "metric": "latency_mean", "value": latency_ms, "unit": "ms"},
        {**common, "metric": "requests", "value": requests, "unit": "requests"},
    ]


def test_a_point_of_few_requests_is_not_flagged_for_what_counting_them_alone_moves():
    """43 requests in 8 s at 10 users: X·(R + Z) 16% above N, and ±15% is the counting noise of 43 (1/√43),
    so it is within 3 of those; 4300 requests off by the same 16% are a broken measurement."""
    few = littles_law.check(pd.DataFrame(webtier_rows(10, 43, 8.0, 160.0))).iloc[0]
    assert few["relative_error"] == pytest.approx(0.161, abs=1e-3) and not few["flagged"]
    assert few["tolerance"] == pytest.approx(3 / 43**0.5)
    many = littles_law.check(pd.DataFrame(webtier_rows(10, 4300, 800.0, 160.0))).iloc[0]
    assert many["relative_error"] == pytest.approx(0.161, abs=1e-3) and many["flagged"]
    assert many["tolerance"] == pytest.approx(littles_law.TOLERANCE)
    # a point that does not count its requests (Redis) keeps the fixed tolerance
    assert littles_law.check(pd.DataFrame(redis_rows(4, 100_000, 400))).iloc[0]["tolerance"] == littles_law.TOLERANCE
