"""Redis (paper §H, Figs. 8–9) under redis-benchmark: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, sorted_within


class RedisParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    clients: list[int] = Field(description="client connections swept (each pipelines `pipeline` requests)")
    pipeline: int = Field(
        10, description="requests in flight per connection; ≤ 1000, redis-benchmark's -P range", ge=1, le=1000
    )
    seconds: float = Field(description="measurement per phase (SET, GET) and point, in seconds", gt=0, le=3600)
    requests: int | None = Field(
        None,
        description="fixed requests per phase instead of `seconds`; ≤ 1e9, a quarter hour at a million requests/s",
        ge=1000,
        le=1_000_000_000,
    )
    warmup_requests: int = Field(
        20_000,
        description="GET requests of the unrecorded warm-up; ≤ 1e8, minutes at a million requests/s",
        ge=1000,
        le=100_000_000,
    )
    keyspace: int = Field(
        1_000_000,
        description="keys filled before measuring; ≤ 1e8, some 10 GB of Redis memory at ~100 B a key",
        ge=1,
        le=100_000_000,
    )
    value_size: int = Field(50, description="bytes per value; ≤ 1 MB, far past the paper's 50 B", ge=1, le=1_000_000)
    server_cores: int = Field(
        1, description="CPUs the server is pinned to; ≤ 1024, more than hosts have", ge=1, le=1024
    )

    @field_validator("clients")
    @classmethod
    def _clients(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 10_000, "client counts")


SPEC = Spec(
    name="redis",
    notebook="experiments/redis.ipynb",
    params_model=RedisParams,
    profiles={
        "quick": {"clients": [1, 4, 100], "seconds": 2.0},
        "standard": {"clients": [1, 2, 4, 8, 16, 32, 64, 128], "seconds": 10.0},
        "paper": {"clients": [1, 2, 4, 8, 16, 32, 50, 64, 100, 128, 150, 200], "seconds": 30.0},
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    schema=Schema(
        workloads={
            "redis": WorkloadSchema(
                sweep="clients",
                headline={"op": "mix"},
                closed_loop=ClosedLoop("throughput", "latency_mean", outstanding="outstanding"),
            )
        },
        figures=(FigureSpec("redis-fig8-9-throughput-latency", "redis.throughput_latency"),),
        tools=("redis-server",),
        client_tools=("redis-tools",),
        claims=(
            "docker_host_equals_native_redis",
            "nat_adds_redis_latency",
            "nat_keeps_redis_from_peak",
            "kvm_slower_redis",
            "kvm_redis_parity_beyond_100",
            "nat_lowers_redis_vmware",
        ),
    ),
)
