"""Redis scale-out (seed 002), native and Docker: parameters, profiles and what the records mean."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec

SUPPORTED_KINDS = ("native", "docker")
PLACEMENTS = ("default", "pinned")


def checked_placements(value: list[str]) -> list[str]:
    """The placements asked for, in the kit's order; an empty list or an unknown one is refused."""
    bad = [p for p in value if p not in PLACEMENTS]
    if not value or bad:
        raise ValueError(f"placements must be among {list(PLACEMENTS)}, got {bad or value}")
    return [p for p in PLACEMENTS if p in value]


class ScaleoutParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    instances: int = Field(description="Redis instances of the scale-out (the post: 8)", ge=2, le=64)
    loaders: int = Field(description="concurrent redis-benchmark loaders of the scale-out (the post: 8)", ge=1, le=64)
    clients: int = Field(description="connections per loader (the post: 100)", ge=1, le=10_000)
    pipeline: int = Field(30, description="requests in flight per connection (the post: 30)", ge=1, le=1000)
    seconds: float = Field(
        description="seconds of the baseline per trial (the scale-out's loaders share its requests)",
        gt=0,
        le=3600,
    )
    requests: int | None = Field(
        None,
        description="fixed requests per loader instead of `seconds`; ≤ 1e9, a quarter hour at a million requests/s",
        ge=100,
        le=1_000_000_000,
    )
    warmup_requests: int = Field(
        20_000,
        description="GET requests of the unrecorded warm-up; ≤ 1e8, minutes at a million requests/s",
        ge=1000,
        le=100_000_000,
    )
    keyspace: int = Field(
        description="keys filled into every instance before measuring; ≤ 1e8, some 10 GB of memory per instance",
        ge=1,
        le=100_000_000,
    )
    value_size: int = Field(1, description="bytes per value (the post: 1)", ge=1, le=1_000_000)
    proxy: Literal["twemproxy", "haproxy"] = Field("twemproxy", description="the proxy tier on the peer")
    placements: list[str] = Field(default_factory=lambda: list(PLACEMENTS), description="placements swept")
    irq_pinning: bool = Field(
        False, description="pin the peer link's interrupts to the SUT CPUs, irqbalance stopped for the run (root)"
    )

    @field_validator("irq_pinning")
    @classmethod
    def _root_for_irqs(cls, value: bool) -> bool:
        if value and os.geteuid() != 0:
            raise ValueError("interrupt pinning writes /proc/irq and stops irqbalance: it needs root")
        return value

    _placements = field_validator("placements")(classmethod(lambda cls, value: checked_placements(value)))


SPEC = Spec(
    name="scaleout",
    notebook="experiments/scaleout.ipynb",
    params_model=ScaleoutParams,
    profiles={
        "quick": {"instances": 2, "loaders": 2, "clients": 8, "seconds": 2.0, "keyspace": 10_000},
        "standard": {"instances": 4, "loaders": 4, "clients": 50, "seconds": 10.0, "keyspace": 1_000_000},
        "paper": {"instances": 8, "loaders": 8, "clients": 100, "seconds": 30.0, "keyspace": 10_000_000},
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    schema=Schema(
        workloads={"scaleout": WorkloadSchema(series=("placement", "config"), headline={"op": "mix"})},
        figures=(
            FigureSpec("scaleout-vroom-fig3-throughput", "scaleout.throughput"),
            FigureSpec("scaleout-vroom-fig4-speedup", "scaleout.speedup"),
        ),
        tools=("redis-server",),
        client_tools=("redis-tools",),
        claims=(
            "scaleout_speedup_below_n",
            "scaleout_pinning_helps_native",
            "scaleout_docker_adds_little",
            "scaleout_vm_fastest_out_of_box",
        ),
    ),
)
