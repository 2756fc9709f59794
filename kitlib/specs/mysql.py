"""MySQL (paper §I, Figs. 10–14): sysbench OLTP against MariaDB: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, sorted_within


class MysqlParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    threads: list[int] = Field(description="sysbench threads swept (paper: to saturation)")
    seconds: float = Field(description="duration of each measured run", gt=0, le=3600)
    warmup_seconds: float = Field(
        5, description="unrecorded run before measuring; ≤ an hour, like a run", ge=0, le=3600
    )
    tables: int = Field(1, description="sysbench tables; ≤ 1000, each prepared before the run", ge=1, le=1000)
    rows: int = Field(
        description="rows per table (paper: 2,000,000); ≤ 1e9, some 250 GB and days of preparing",
        ge=100,
        le=1_000_000_000,
    )
    buffer_pool_mb: int = Field(
        description="InnoDB buffer pool (paper: 3 GB); ≤ 4 TiB, past any host's memory", ge=16, le=4 * 2**20
    )
    server_cores: int = Field(
        1, description="CPUs the server is pinned to; ≤ 1024, more than hosts have", ge=1, le=1024
    )

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 4096, "thread counts")


SPEC = Spec(
    name="mysql",
    notebook="experiments/mysql.ipynb",
    params_model=MysqlParams,
    profiles={
        "quick": {
            "threads": [1, 4, 16],
            "seconds": 8,
            "warmup_seconds": 3,
            "rows": 20_000,
            "buffer_pool_mb": 128,
        },
        "standard": {"threads": [1, 2, 4, 8, 16, 32, 64], "seconds": 20, "rows": 200_000, "buffer_pool_mb": 512},
        "paper": {
            "threads": [1, 2, 4, 8, 16, 32, 64, 128, 256],
            "seconds": 60,
            "rows": 2_000_000,
            "buffer_pool_mb": 3072,
        },
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume", "docker-nat-overlay"),
    schema=Schema(
        workloads={
            "oltp_read_write": WorkloadSchema(
                sweep="threads", closed_loop=ClosedLoop("tps", "latency_mean", outstanding="threads")
            )
        },
        figures=(FigureSpec("mysql-fig10-13", "mysql.mysql_figures"),),
        tools=("mariadb-server",),
        client_tools=("sysbench",),
        claims=(
            "overlay_slows_mysql",
            "docker_near_native_mysql",
            "kvm_mysql_loss",
            "nat_mysql_little_overhead",
            "docker_mysql_latency_rises_faster",
            "native_mysql_peak_cpu_higher",
        ),
    ),
)
