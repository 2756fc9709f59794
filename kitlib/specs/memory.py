"""Memory (paper §D–E): STREAM and RandomAccess: parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kitlib.core.schema import FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec


class MemoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no size

    llc_multiple: float = Field(4.0, description="STREAM: each array at least this many times the LLC", gt=0, le=1024)
    stream_ntimes: int = Field(
        10, description="STREAM: passes of each kernel (the first is not counted)", ge=2, le=1000
    )
    stream_elements: int | None = Field(
        None,
        description="STREAM: doubles per array; None = from the LLC (at most 2^37: 1 TiB an array)",
        ge=1000,
        le=2**37,
    )
    gups_llc_multiple: float = Field(
        4.0, description="RandomAccess: table at least this many times the LLC", gt=0, le=1024
    )
    gups_min_table_mb: int = Field(1024, description="RandomAccess: table at least this many MiB", ge=1, le=2**20)
    gups_updates_per_word: int = Field(4, description="RandomAccess: updates per table word (spec: 4)", ge=1, le=4)
    gups_log2_words: int | None = Field(
        None, description="RandomAccess: table of 2^k words; None = derived", ge=10, le=40
    )
    sizing_basis: str | None = Field(None, description="how the sizes were chosen (filled when the plan is made)")


#: what a duet point of STREAM or RandomAccess is: half the CPUs a side, and the memory system shared
DUET_SHARED_BANDWIDTH = (
    "each side on half the CPUs, threads as many; both sides share the memory controllers and the last-level "
    "cache, so a side's bandwidth is about half the machine's: a ratio between environments, not the paper's GB/s"
)

SPEC = Spec(
    name="memory",
    notebook="experiments/memory.ipynb",
    params_model=MemoryParams,
    profiles={
        "quick": {"gups_updates_per_word": 1, "stream_ntimes": 10},
        "standard": {"gups_updates_per_word": 4, "stream_ntimes": 20},
        "paper": {"llc_multiple": 8.0, "gups_updates_per_word": 4, "gups_min_table_mb": 16384, "stream_ntimes": 20},
    },
    default_envs=("native", "docker-host-volume"),
    presets={
        # seed 003 (§4.2, Table 2): STREAM with arrays beyond the cache (the kit's sizing rule)
        "seed003-stream": {"llc_multiple": 4.0},
    },
    schema=Schema(
        workloads={
            # not in duets: its figure is the best of its passes, and a side's last passes, run while the other
            # side has ended, meet the memory system alone: measured here, Docker read 1.28x native in 11 duets
            # (0.89x one at a time) and native 0.94x its own replica, whichever side had which CPU
            "stream": WorkloadSchema(series=("kernel", "variant")),
            "randomaccess": WorkloadSchema(series=("variant",), duet=DUET_SHARED_BANDWIDTH),
        },
        figures=(FigureSpec("memory-stream-kernels", "memory.stream_kernels", ("stream",)),),
        tools=("libgomp1",),
        claims=(
            "docker_near_native_stream",
            "kvm_near_native_stream",
            "docker_near_native_randomaccess",
            "kvm_near_native_randomaccess",
            "lxc_docker_similar_stream",
            "docker_in_vm_similar_stream",
            "numa_pinning_helps_memory",
        ),
    ),
)
