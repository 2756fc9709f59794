"""CPU (paper §B–C): PXZ compression and Linpack: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import Schema, WorkloadSchema
from kitlib.specs.base import Spec, known_names


class CpuParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no size

    corpus_mb: int = Field(description="generated corpus size (the paper: 1000 MB enwik9)", ge=1, le=100_000)
    level: int = Field(2, description="xz preset level", ge=0, le=9)
    linpack_n: int | None = Field(
        None,
        description="Linpack problem size N; None = derived from memory (at most 200000: 640 GB)",
        ge=100,
        le=200_000,
    )
    linpack_memory_fraction: float = Field(
        0.5, description="share of memory the two N x N matrices may use", gt=0, le=0.9
    )
    linpack_n_cap: int = Field(description="largest N the derived size may reach", ge=100, le=200_000)
    linpack_trials: int = Field(
        3, description="solves of the same matrix per point; the first is not counted", ge=1, le=100
    )
    workloads: list[str] = Field(default_factory=lambda: ["pxz", "linpack"])

    @field_validator("workloads")
    @classmethod
    def _known_workloads(cls, value: list[str]) -> list[str]:
        return known_names(value, ("pxz", "linpack"))

    linpack_n_basis: str | None = Field(None, description="how linpack_n was chosen (filled when the plan is made)")


#: what a duet point of PXZ or Linpack is: the threads that fit half the machine
DUET_HALF_CPUS = (
    "each side on half the CPUs with as many threads (xz -T, OpenMP), both sides sharing the memory system: "
    "a ratio between environments at half the machine's threads, not the paper's MB/s or GFLOPS"
)

SPEC = Spec(
    name="cpu",
    notebook="experiments/cpu.ipynb",
    params_model=CpuParams,
    profiles={
        "quick": {"corpus_mb": 32, "linpack_n_cap": 6000, "linpack_trials": 3},
        "standard": {"corpus_mb": 256, "linpack_n_cap": 20000, "linpack_trials": 5},
        "paper": {"corpus_mb": 1000, "linpack_n_cap": 100000, "linpack_trials": 5},
    },
    default_envs=("native", "docker-host-volume"),
    schema=Schema(
        workloads={
            "pxz": WorkloadSchema(series=("level",), tools=("xz-utils",), duet=DUET_HALF_CPUS),
            "linpack": WorkloadSchema(tools=("libopenblas0-openmp", "libgomp1"), duet=DUET_HALF_CPUS),
        },
        claims=(
            "docker_near_native_pxz",
            "kvm_pxz_loss",
            "kvm_tuning_no_pxz_gain",
            "docker_near_native_linpack",
            "kvm_untuned_linpack_loss",
            "kvm_tuned_linpack_near_native",
        ),
    ),
)
