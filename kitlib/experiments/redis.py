"""Redis: the paper's key-value workload (Section H), server pinned to one core, client on the peer.

50% GET / 50% SET as two equal phases per point (SET, then GET of the same key space), each with
all client connections pipelining `pipeline` requests; the dataset is cleared before each point.
Keys are redis-benchmark's `__rand_int__` (12 characters; the paper's were 10) and values are
`value_size` bytes. The `mix` rows combine both phases: throughput = all requests / total time,
mean latency = mean over all requests.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.environments.base import Environment
from kitlib.experiments.base import Experiment, RawResult, Workload, sorted_within
from kitlib.peer import Peer
from kitlib.records import Measurement

KEY_LENGTH = 12  # redis-benchmark's __rand_int__ placeholder is 12 digits


class RedisParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    clients: list[int] = Field(description="client connections swept (each pipelines `pipeline` requests)")
    pipeline: int = Field(10, ge=1, le=1000)
    requests: int = Field(description="requests per phase (SET, GET) and point", ge=1000)
    keyspace: int = Field(1_000_000, ge=1)
    value_size: int = Field(50, ge=1, le=1_000_000)
    server_cores: int = Field(1, ge=1)

    @field_validator("clients")
    @classmethod
    def _clients(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 10_000, "client counts")


class RedisWorkload(Workload):
    name = "redis"
    tool = "redis-benchmark"
    ports_needed = 1

    def __init__(self, params: RedisParams):
        super().__init__(params)
        self.sut_cores = params.server_cores
        self.target: tuple[str, int] | None = None

    def points(self) -> list[dict[str, Any]]:
        return [{"clients": c, "pipeline": self.params.pipeline} for c in self.params.clients]

    def prepare(self, env: Environment, peer: Peer) -> None:
        port = env.layout.ports[0]
        env.start_service(
            "redis",
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "0.0.0.0",
                "--protected-mode",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                env.data_dir,
            ],
            ready_port=port,
        )
        self.target = env.address_for_peer(port, peer.host_address)
        host, mapped = self.target
        peer.run(["redis-cli", "-h", host, "-p", str(mapped), "PING"], timeout=30)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        assert self.target is not None, "prepare() first"
        host, port = self.target
        p = self.params
        peer.run(["redis-cli", "-h", host, "-p", str(port), "FLUSHALL"], timeout=60)
        common = [
            "redis-benchmark",
            "-h",
            host,
            "-p",
            str(port),
            "-c",
            str(point["clients"]),
            "-n",
            str(p.requests),
            "-P",
            str(p.pipeline),
            "-r",
            str(p.keyspace),
            "--csv",
        ]
        timeout = 120 + p.requests / 2000
        set_out = peer.run([*common, "SET", "__rand_int__", "v" * p.value_size], timeout=timeout).output
        get_out = peer.run([*common, "GET", "__rand_int__"], timeout=timeout).output
        return RawResult(outputs={"set": set_out, "get": get_out})

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        found = super().parse(raw, source)
        return found + mix_of_phases(found)

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        p = self.params
        return {
            **point,
            "outstanding": point["clients"] * p.pipeline,
            "requests": p.requests,
            "value_size": p.value_size,
            "key_length": KEY_LENGTH,
        }


def mix_of_phases(found: list[Measurement]) -> list[Measurement]:
    """Combine equal-sized SET and GET phases into the 50/50 mix the paper reports."""
    by_op = {(m.metric, m.dims.get("op")): m.value for m in found}
    rates = [by_op.get(("throughput", op)) for op in ("SET", "GET")]
    means = [by_op.get(("latency_mean", op)) for op in ("SET", "GET")]
    if None in rates or None in means:
        return []
    throughput = 2.0 / (1.0 / rates[0] + 1.0 / rates[1])
    return [
        Measurement("throughput", throughput, "req/s", {"op": "mix"}),
        Measurement("latency_mean", (means[0] + means[1]) / 2.0, "us", {"op": "mix"}),
    ]


EXPERIMENT = Experiment(
    name="redis",
    notebook="experiments/redis.ipynb",
    params_model=RedisParams,
    profiles={
        "quick": {"clients": [1, 4, 16, 48], "requests": 100_000},
        "standard": {"clients": [1, 2, 4, 8, 16, 32, 64, 128], "requests": 500_000},
        "paper": {"clients": [1, 2, 4, 8, 16, 32, 50, 64, 100, 128, 150, 200], "requests": 2_000_000},
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    make_workloads=lambda params: [RedisWorkload(params)],
)
