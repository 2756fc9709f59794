"""OLTP scale-out (seed 002), MariaDB under sysbench: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, sorted_within
from kitlib.specs.scaleout import PLACEMENTS, checked_placements

#: the `instance` value of the rows that sum every instance of a point (the others are 0, 1, …)
AGGREGATE = "all"


class ScaleoutOltpParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    instances: int = Field(description="independent database instances, one client each (the post: 16)", ge=1, le=64)
    threads: list[int] = Field(description="sysbench threads of every client (the post: 4 per driver)")
    seconds: float = Field(description="duration of each measured run", gt=0, le=3600)
    warmup_seconds: float = Field(2, description="unrecorded run of all clients at once after preparing", ge=0, le=3600)
    tables: int = Field(1, description="sysbench tables per instance", ge=1, le=1000)
    rows: int = Field(
        description="rows per table of every instance; ≤ 1e9, some 250 GB and days of preparing",
        ge=100,
        le=1_000_000_000,
    )
    buffer_pool_mb: int = Field(
        description="InnoDB buffer pool of every instance; ≤ 4 TiB, past any host's memory", ge=16, le=4 * 2**20
    )
    placements: list[str] = Field(default_factory=lambda: list(PLACEMENTS), description="placements swept")

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 4096, "thread counts")

    _placements = field_validator("placements")(classmethod(lambda cls, value: checked_placements(value)))


SPEC = Spec(
    name="scaleout-oltp",
    notebook="experiments/scaleout-oltp.ipynb",
    params_model=ScaleoutOltpParams,
    profiles={
        "quick": {
            "instances": 2,
            "threads": [4],
            "seconds": 8,
            "warmup_seconds": 2,
            "rows": 5000,
            "buffer_pool_mb": 32,
        },
        "standard": {
            "instances": 4,
            "threads": [4],
            "seconds": 30,
            "warmup_seconds": 10,
            "rows": 100_000,
            "buffer_pool_mb": 256,
        },
        "paper": {
            "instances": 16,
            "threads": [4],
            "seconds": 120,
            "warmup_seconds": 30,
            "rows": 500_000,
            "buffer_pool_mb": 512,
        },
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    schema=Schema(
        workloads={"scaleout_oltp_read_write": WorkloadSchema(sweep="threads", series=("placement",))},
        figures=(FigureSpec("scaleout-oltp-vroom-fig2-normalised", "scaleout_oltp.scaleout_oltp_figure"),),
        tools=("mariadb-server",),
        client_tools=("sysbench",),
        claims=("scaleout_oltp_docker_adds_little",),
    ),
)
