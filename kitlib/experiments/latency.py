"""Latency study of Docker configurations (seed 004): CPU shares, CPU quota, bridge vs host network.

The kit's request-response service (kitlib/services/rr.py) runs pinned to one core in the
environment under test, its client on the peer, one request in flight, every latency kept.
Each request can cost real CPU work on the server (`work` rounds of SHA-256), because the quota
effect appears only when the server uses CPU.

- shares: native vs Docker with --cpu-shares=1024, host network (the study's Fig. 1, Table 1)
- quota:  --cpu-period=10000 with --cpu-quota swept; the tail collapses once the quota falls
          below the server's CPU utilization × period (Table 2, Fig. 2)
- bridge: host network vs bridge with a published port, message sizes 1–100 KB, the server
          receiving and sending (Fig. 3)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib import services
from kitlib.environments.base import Environment
from kitlib.environments.labels import parse_label
from kitlib.experiments.base import Experiment, RawResult, Workload
from kitlib.peer import Peer

PARTS = ("shares", "quota", "bridge")
BRIDGE_ENVS = ("docker-host-volume", "docker-nat-volume")


class LatencyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    parts: list[str] = Field(default_factory=lambda: list(PARTS))
    requests: int = Field(description="requests per run (the study: 1,000,000)", ge=100, le=10_000_000)
    max_seconds: float = Field(60.0, description="upper bound on one run's duration", gt=0, le=3600)
    work: int = Field(0, description="SHA-256 rounds of server work per request", ge=0, le=1_000_000)
    shares: int = Field(1024, ge=2, le=262_144)
    period: int = Field(10_000, ge=1000, le=1_000_000)
    quotas: list[int] = Field(description="--cpu-quota values swept (µs per period)")
    sizes_kb: list[int] = Field(description="message sizes for the bridge part (KB)")

    @field_validator("parts")
    @classmethod
    def _parts(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(PARTS))
        if unknown or not value:
            raise ValueError(f"unknown or no parts {unknown}; known parts: {', '.join(PARTS)}")
        return value

    @field_validator("quotas")
    @classmethod
    def _quotas(cls, value: list[int]) -> list[int]:
        if not value or any(q < 1000 for q in value):
            raise ValueError(f"quotas must be at least 1000 µs (the kernel's minimum), got {value}")
        return sorted(set(value))

    @field_validator("sizes_kb")
    @classmethod
    def _sizes(cls, value: list[int]) -> list[int]:
        if not value or any(s < 1 or s > 1024 for s in value):
            raise ValueError(f"sizes must be between 1 and 1024 KB, got {value}")
        return sorted(set(value))


class RequestResponse(Workload):
    """Common part: the service in the environment, the client on the peer."""

    tool = "kit-rr"
    ports_needed = 1

    def __init__(self, params: LatencyParams):
        super().__init__(params)
        self.target: tuple[str, int] | None = None

    def prepare(self, env: Environment, peer: Peer) -> None:
        port = env.layout.ports[0]
        env.start_service("rr", services.command("rr", "server", port), ready_port=port)
        self.target = env.address_for_peer(port, peer.host_address)

    def exchange(self, peer: Peer, request_bytes: int, response_bytes: int) -> RawResult:
        assert self.target is not None, "prepare() first"
        p = self.params
        argv = services.command(
            "rr", "client", *self.target, p.requests, request_bytes, response_bytes, p.work, p.max_seconds
        )
        output = peer.run(argv, timeout=p.max_seconds + 60).output
        return RawResult(outputs={"rr": output})

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        return {**point, "work": self.params.work}


class SharesWorkload(RequestResponse):
    name = "shares"

    def applies_to(self, env_label: str) -> bool:
        spec = parse_label(env_label)
        return env_label == "native" or (spec.network == "host" and set(spec.options) == {"shares"})

    def points(self) -> list[dict[str, Any]]:
        return [{"request_bytes": 1, "response_bytes": 1}]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        return self.exchange(peer, point["request_bytes"], point["response_bytes"])


class QuotaWorkload(SharesWorkload):
    name = "quota"

    def applies_to(self, env_label: str) -> bool:
        spec = parse_label(env_label)
        return spec.network == "host" and "quota" in spec.options


class BridgeWorkload(RequestResponse):
    name = "bridge"

    def applies_to(self, env_label: str) -> bool:
        return env_label in BRIDGE_ENVS

    def points(self) -> list[dict[str, Any]]:
        return [
            {"size_kb": size, "direction": direction}
            for size in self.params.sizes_kb
            for direction in ("server_receives", "server_sends")
        ]

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        size = point["size_kb"] * 1024
        if point["direction"] == "server_receives":
            return self.exchange(peer, size, 1)
        return self.exchange(peer, 1, size)


def environments(params: LatencyParams) -> list[str]:
    """The environments the chosen parts need, in the kit's label vocabulary."""
    envs: list[str] = []
    if "shares" in params.parts:
        envs += ["native", f"docker-host-volume+shares{params.shares}"]
    if "quota" in params.parts:
        envs += [f"docker-host-volume+period{params.period}+quota{q}" for q in params.quotas]
    if "bridge" in params.parts:
        envs += [e for e in BRIDGE_ENVS if e not in envs]
    return envs


def workloads(params: LatencyParams) -> list[Workload]:
    chosen = {"shares": SharesWorkload, "quota": QuotaWorkload, "bridge": BridgeWorkload}
    return [chosen[part](params) for part in PARTS if part in params.parts]


EXPERIMENT = Experiment(
    name="latency",
    notebook="experiments/latency.ipynb",
    params_model=LatencyParams,
    profiles={
        "quick": {
            "requests": 5000,
            "max_seconds": 20,
            "quotas": [1000, 2000, 3000, 4000, 6000, 10000],
            "sizes_kb": [1, 10, 50, 100],
        },
        "standard": {
            "requests": 100_000,
            "max_seconds": 120,
            "quotas": [1000, 1500, 2000, 2500, 3000, 4000, 5000, 7000, 10000],
            "sizes_kb": [1, 10, 30, 50, 70, 100],
        },
        "paper": {
            "requests": 1_000_000,
            "max_seconds": 900,
            "quotas": [1000, 1500, 2000, 2500, 3000, 4000, 5000, 7000, 10000],
            "sizes_kb": [1, 10, 30, 50, 70, 100],
        },
    },
    default_envs=environments,
    make_workloads=workloads,
    repetitions={"quick": 2, "standard": 5, "paper": 10},
)
