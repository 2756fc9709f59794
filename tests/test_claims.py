"""Claims on small synthetic record sets (built here, not measured) covering each verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd

from kitlib import claims


def redis(env: str, latency: float, throughput: float, reps: int = 4, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for clients in (1, 4, 16):
        for rep in range(reps):
            common = {
                "experiment": "redis",
                "workload": "redis",
                "env": env,
                "run_id": "synthetic",
                "repetition": rep,
                "clients": clients,
                "pipeline": 10,
                "op": "mix",
            }
            rows.append(
                {
                    **common,
                    "metric": "latency_mean",
                    "unit": "us",
                    "value": latency * clients * (1 + 0.01 * rng.standard_normal()),
                }
            )
            rows.append(
                {
                    **common,
                    "metric": "throughput",
                    "unit": "req/s",
                    "value": throughput * (1 + 0.01 * rng.standard_normal()),
                }
            )
    return rows


def verdicts(rows: list[dict]) -> dict[str, str]:
    table = claims.evaluate_all(pd.DataFrame(rows))
    return dict(zip(table["claim"], table["status"], strict=True))


def test_nat_latency_reproduced_and_not():
    base = redis("native", 100, 1e5) + redis("docker-host-volume", 100, 1e5, seed=1)
    slower = verdicts(base + redis("docker-nat-volume", 125, 0.9e5, seed=2))
    assert slower["nat_adds_redis_latency"] == claims.REPRODUCED
    assert slower["docker_host_equals_native_redis"] == claims.REPRODUCED
    same = verdicts(base + redis("docker-nat-volume", 100, 1e5, seed=3))
    assert same["nat_adds_redis_latency"] == claims.NOT_REPRODUCED


def test_missing_experiments_and_vms_are_not_testable_with_reasons():
    rows = redis("native", 100, 1e5) + redis("qemu-tcg", 300, 0.3e5, seed=4)
    table = claims.evaluate_all(pd.DataFrame(rows)).set_index("claim")
    assert table.loc["kvm_slower_redis", "status"] == claims.NOT_TESTABLE
    assert "software emulation (qemu-tcg)" in table.loc["kvm_slower_redis", "reason"]
    assert table.loc["overlay_slows_mysql", "status"] == claims.NOT_TESTABLE
    assert "no mysql tps" in table.loc["overlay_slows_mysql", "reason"]
    assert (claims.evaluate_all(pd.DataFrame())["status"] == claims.NOT_TESTABLE).all()


def test_docker_far_from_native_is_not_reproduced():
    rows = redis("native", 100, 1e5) + redis("docker-host-volume", 100, 0.7e5, seed=5)
    assert verdicts(rows)["docker_host_equals_native_redis"] == claims.NOT_REPRODUCED


def quota_rows(p99_by_quota: dict[int, float], utilization: dict[int, float]) -> list[dict]:
    rows = []
    for quota, p99 in p99_by_quota.items():
        common = {
            "experiment": "latency",
            "workload": "quota",
            "env": f"docker-host-volume+period10000+quota{quota}",
            "run_id": "synthetic",
            "repetition": 0,
            "quota": quota,
            "period": 10000,
        }
        for metric, value in (
            ("latency_p99", p99),
            ("latency_mean", p99 / 3),
            ("latency_median", 90.0),
            ("slow_requests", 0.0),
            ("server_cpu_utilization", utilization[quota]),
        ):
            rows.append({**common, "metric": metric, "value": value, "unit": "us"})
    return rows


def test_quota_cliff_where_quota_is_below_the_servers_need():
    use = {1000: 10, 2000: 20, 3000: 30, 5000: 35, 10000: 35}
    cliff = verdicts(quota_rows({1000: 8000, 2000: 4000, 3000: 1500, 5000: 160, 10000: 150}, use))
    assert cliff["quota_cliff"] == claims.REPRODUCED
    flat = verdicts(quota_rows({1000: 160, 2000: 150, 3000: 155, 5000: 160, 10000: 150}, use))
    assert flat["quota_cliff"] == claims.NOT_REPRODUCED
