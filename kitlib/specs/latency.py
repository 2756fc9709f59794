"""Latency of Docker's parts (seed 004): shares, quotas, bridge, storage driver; parameters and schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, known_names, sorted_within

PARTS = ("shares", "quota", "bridge", "storage")
BRIDGE_ENVS = ("docker-host-volume", "docker-nat-volume")
STORAGE_ENVS = ("docker-host-overlay", "docker-host-volume")


def environments(params: LatencyParams) -> list[str]:
    """The environments the chosen parts need, in the kit's label vocabulary."""
    envs: list[str] = []
    if "shares" in params.parts:
        envs += ["native", f"docker-host-volume+shares{params.shares}"]
    if "quota" in params.parts:
        envs += [f"docker-host-volume+period{params.period}+quota{q}" for q in params.quotas]
    if "bridge" in params.parts:
        envs += [e for e in BRIDGE_ENVS if e not in envs]
    if "storage" in params.parts:
        envs += [e for e in STORAGE_ENVS if e not in envs]
    return envs


class LatencyParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    parts: list[str] = Field(default_factory=lambda: list(PARTS))

    requests: int = Field(description="requests per run (the study: 1,000,000)", ge=100, le=10_000_000)
    max_seconds: float = Field(60.0, description="upper bound on one run's duration", gt=0, le=3600)
    work: int = Field(0, description="SHA-256 rounds of server work per request", ge=0, le=1_000_000)
    shares: int = Field(1024, description="--cpu-shares; 2 to 262144, the kernel's range", ge=2, le=262_144)
    period: int = Field(10_000, description="--cpu-period (µs); 1000 to 1000000, Docker's range", ge=1000, le=1_000_000)
    quotas: list[int] = Field(description="--cpu-quota values swept (µs per period)")
    sizes_kb: list[int] = Field(description="message sizes for the bridge part (KB)")
    write_sizes_kb: list[int] = Field(description="write sizes for the storage part (KB)")
    file_operations: int = Field(description="writes or opens per storage point", ge=10, le=10_000_000)
    copyup_sizes_mb: list[int] = Field(description="sizes of lower-layer files written once (MB)")
    layers: list[int] = Field(description="image layer counts for the recursive listing")
    tree_files: int = Field(description="files in the tree each layer adds", ge=1, le=1_000_000)
    tree_file_kb: int = Field(
        4, description="size of each tree file (KB); ≤ 10 MB, a tree is of small files", ge=1, le=10_240
    )
    walks: int = Field(5, description="recursive listings per point", ge=1, le=1000)

    @field_validator("parts")
    @classmethod
    def _parts(cls, value: list[str]) -> list[str]:
        return known_names(value, PARTS)

    @field_validator("quotas")
    @classmethod
    def _quotas(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1000, 1_000_000, "quotas (µs; the kernel's minimum is 1000)")

    @field_validator("layers")
    @classmethod
    def _layers(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 100, "layer counts")

    @field_validator("copyup_sizes_mb", "write_sizes_kb")
    @classmethod
    def _positive_sizes(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 4096, "sizes")

    @field_validator("sizes_kb")
    @classmethod
    def _sizes(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 1024, "message sizes (KB)")


SPEC = Spec(
    name="latency",
    notebook="experiments/latency.ipynb",
    params_model=LatencyParams,
    profiles={
        "quick": {
            "requests": 5000,
            "max_seconds": 20,
            "quotas": [1000, 2000, 4000, 6000, 7000, 8000, 9000, 10000],
            "sizes_kb": [1, 10, 50, 100],
            "write_sizes_kb": [1, 10, 100],
            "file_operations": 2000,
            "copyup_sizes_mb": [1, 16, 64],
            "layers": [1, 2, 4, 8],
            "tree_files": 400,
        },
        "standard": {
            "requests": 100_000,
            "max_seconds": 120,
            "quotas": [1000, 1500, 2000, 2500, 3000, 4000, 5000, 7000, 8500, 10000],
            "sizes_kb": [1, 10, 30, 50, 70, 100],
            "write_sizes_kb": [1, 4, 10, 30, 50, 70, 100],
            "file_operations": 10_000,
            "copyup_sizes_mb": [1, 16, 64],
            "layers": [1, 2, 4, 8, 16],
            "tree_files": 2000,
        },
        "paper": {
            "requests": 1_000_000,
            "max_seconds": 900,
            "quotas": [1000, 1500, 2000, 2500, 3000, 4000, 5000, 7000, 8500, 10000],
            "sizes_kb": [1, 10, 30, 50, 70, 100],
            "write_sizes_kb": [1, 4, 10, 30, 50, 70, 100],
            "file_operations": 10_000,
            "copyup_sizes_mb": [1, 16, 64, 256],
            "layers": [1, 2, 4, 8, 16, 32],
            "tree_files": 13_000,
        },
    },
    default_envs=environments,
    repetitions={"quick": 3, "standard": 5, "paper": 10},
    schema=Schema(
        workloads={
            "shares": WorkloadSchema(closed_loop=ClosedLoop("throughput", "latency_mean")),
            "quota": WorkloadSchema(sweep="quota", closed_loop=ClosedLoop("throughput", "latency_mean")),
            "bridge": WorkloadSchema(
                sweep="size_kb", series=("direction",), closed_loop=ClosedLoop("throughput", "latency_mean")
            ),
            "storage": WorkloadSchema(sweep="size_kb", series=("operation",)),
            "copy_up": WorkloadSchema(sweep="size_mb"),
            "layers": WorkloadSchema(sweep="layers"),
        },
        figures=(
            # the study's own figure numbers, with its short name: never to be read as Felter's Figs. 1–6
            FigureSpec("latency-closer-look-fig1-cdf-shares", "latency.latency_cdf", ("shares",)),
            FigureSpec("latency-closer-look-fig2-quota", "latency.quota_figure", ("quota",)),
            FigureSpec("latency-closer-look-fig3-bridge", "latency.bridge_vs_host", ("bridge",)),
            FigureSpec(
                "latency-closer-look-fig4-6-storage", "latency.storage_operations", ("storage", "copy_up", "layers")
            ),
        ),
        claims=(
            "quota_cliff",
            "bridge_cost_fixed_offset",
            "overlay_slows_open",
            "overlay_write_unaffected",
            "layers_slow_directory_walk",
            "copy_up_grows_with_file_size",
            "docker_shares_near_native_latency",
        ),
    ),
)
