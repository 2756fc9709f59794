"""Block I/O (paper §G, Figs. 5–7), fio on the storage under test: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core.schema import FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec, known_names

#: workload -> (fio rw, block size, iodepth from the profile or fixed, extra args)
JOBS = {
    "seq_read": ("read", "1M", None, []),
    "seq_write": ("write", "1M", None, []),
    "rand_read": ("randread", "4k", None, []),
    "rand_write": ("randwrite", "4k", None, []),
    "rand_mixed": ("randrw", "4k", None, ["--rwmixread=70"]),
    "rand_read_latency": ("randread", "4k", 16, []),
}


class BlockParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    file_mb: int = Field(description="test file size (paper: 16 GB)", ge=1, le=10_000_000)
    runtime: float = Field(description="seconds per job (paper: 60)", gt=0, le=3600)
    iodepth: int = Field(description="queue depth of the throughput jobs (paper: 128)", ge=1, le=4096)
    numjobs: int = Field(1, description="fio jobs per point, reported as one group (seed 003: 8)", ge=1, le=256)
    workloads: list[str] = Field(default_factory=lambda: list(JOBS))

    @field_validator("workloads")
    @classmethod
    def _known_workloads(cls, value: list[str]) -> list[str]:
        return known_names(value, tuple(JOBS))


SPEC = Spec(
    name="block",
    notebook="experiments/block.ipynb",
    params_model=BlockParams,
    profiles={
        "quick": {"file_mb": 256, "runtime": 6, "iodepth": 32},
        "standard": {"file_mb": 4096, "runtime": 20, "iodepth": 128},
        "paper": {"file_mb": 16384, "runtime": 60, "iodepth": 128},
    },
    default_envs=("native", "docker-host-volume", "docker-host-overlay"),
    presets={
        # seed 003 (§4.2, Fig. 3): random read and write, libaio, O_DIRECT, iodepth 16, 8 jobs, 4 kB, 1 GB
        "seed003-fio": {"workloads": ["rand_read", "rand_write"], "iodepth": 16, "numjobs": 8, "file_mb": 1024},
    },
    schema=Schema(
        workloads={
            name: WorkloadSchema(series=("rw", "block_size", "iodepth"))
            for name in ("seq_read", "seq_write", "rand_read", "rand_write", "rand_mixed", "rand_read_latency")
        },
        figures=(FigureSpec("block-fig5-7-sequential-random-latency", "net_block.block"),),
        tools=("fio",),
        claims=(
            "docker_negligible_sequential_io",
            "kvm_negligible_sequential_io",
            "docker_no_random_io_overhead",
            "kvm_halves_random_iops",
            "kvm_raises_read_latency",
            "lxc_beats_docker_random_io",
            "overlay_explains_lxc_gap",
            "docker_in_vm_costs_disk_io",
        ),
    ),
)
