"""CPU (paper §A–B, Table I): PXZ as parallel LZMA compression, and Linpack (HPL from hpcc).

PXZ: `xz -T threads -2` of a deterministic generated text corpus held in the page cache, output
discarded (the paper: 1 GB enwik9, 32 threads, level 2); MB/s of input. Linpack: hpcc's HPL on
every CPU of the environment (one MPI rank per core, pinned); GFLOPS. N is the same in every
environment of a run: derived when the plan is made from the smallest environment's memory (the
host's for native and containers, the guest's for VMs), capped by the profile (and under software
emulation), and recorded in the plan as the parameter `hpl_n` with how it was chosen (`hpl_n_basis`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kitlib import services
from kitlib.environments import vm
from kitlib.environments.base import Environment
from kitlib.environments.labels import parse_label
from kitlib.experiments import hpcc_run
from kitlib.experiments.base import Experiment, RawResult, Workload
from kitlib.parsers import hpcc
from kitlib.peer import Peer
from kitlib.records import Measurement
from kitlib.schema import Schema, WorkloadSchema

CORPUS_SEED = 1_000_000_000  # the size of enwik9, as a fixed seed


class CpuParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    corpus_mb: int = Field(description="generated corpus size (the paper: 1000 MB enwik9)", ge=1, le=100_000)
    level: int = Field(2, ge=0, le=9)
    hpl_n: int | None = Field(None, description="HPL problem size; None = derived from memory", ge=100)
    hpl_memory_fraction: float = Field(0.5, gt=0, le=0.9)
    hpl_n_cap: int = Field(description="largest N the derived size may reach", ge=100)
    workloads: list[str] = Field(default_factory=lambda: ["pxz", "linpack"])
    hpl_n_basis: str | None = Field(None, description="how hpl_n was chosen (filled when the plan is made)")


def environment_memory_bytes(label: str) -> int:
    """Memory an environment's processes see, known before it starts: a `+mem` limit, a guest's
    memory, else the host's total."""

    spec = parse_label(label)
    mem = spec.options.get("mem")
    if spec.kind in ("vm", "docker-in-vm"):
        return (vm._memory_from_label(mem) or vm._default_memory()) * 2**20
    if mem:
        return (vm._memory_from_label(mem) or 0) * 2**20
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def settle(params: CpuParams, environments: Sequence[str]) -> CpuParams:
    """One HPL N for every environment of the run, from the smallest one's memory."""
    if params.hpl_n is not None:
        return params.model_copy(update={"hpl_n_basis": params.hpl_n_basis or "given"})
    memory = {label: environment_memory_bytes(label) for label in environments}
    smallest = min(memory, key=memory.get)
    n = hpl_n = hpcc_run.n_for_memory(memory[smallest], params.hpl_memory_fraction, params.hpl_n_cap)
    basis = (
        f"{params.hpl_memory_fraction:g} of {memory[smallest] / 2**30:.1f} GiB ({smallest}, the smallest), "
        f"cap {params.hpl_n_cap}"
    )
    if any(label.split("+")[0] in EMULATED for label in environments) and n > hpcc_run.EMULATED_N_CAP:
        hpl_n = hpcc_run.EMULATED_N_CAP
        basis += f"; {n} capped at {hpl_n} by software emulation"
    return params.model_copy(update={"hpl_n": max(100, hpl_n), "hpl_n_basis": basis})


#: labels whose CPU is emulated (HPL there runs at ~0.1 GFLOPS)
EMULATED = ("qemu-tcg", "docker-in-qemu-tcg")


class PxzWorkload(Workload):
    name = "pxz"
    tool = "xz"
    sut_cores = None

    def __init__(self, params: CpuParams):
        super().__init__(params)
        self.facts: dict[str, Any] = {}

    def points(self) -> list[dict[str, Any]]:
        return [{"level": self.params.level}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        path = f"{env.data_dir}/corpus.txt"
        size = self.params.corpus_mb * 1024 * 1024
        env.run(services.command("corpus", path, size, CORPUS_SEED), timeout=1800)
        digest = env.run(["sha256sum", path], timeout=600).output.split()[0]
        env.run(["sh", "-c", f"cat {path} > /dev/null"], timeout=600)  # into the page cache, as the paper's RAM
        self.facts = {"corpus_bytes": size, "corpus_sha256": digest, "threads": len(env.layout.sut_cpus)}

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        threads = len(env.layout.sut_cpus)
        script = (
            f"echo kit-input-bytes $(stat -c %s {env.data_dir}/corpus.txt); TIMEFORMAT='kit-elapsed-seconds %3R';"
            f" time xz -T {threads} -{point['level']} -c -v < {env.data_dir}/corpus.txt > /dev/null"
        )
        output = env.run(["bash", "-c", script], timeout=3600).output
        return RawResult(outputs={"xz": output}, facts=dict(self.facts))


class LinpackWorkload(Workload):
    name = "linpack"
    tool = "hpcc"
    sut_cores = None

    def __init__(self, params: CpuParams):
        super().__init__(params)
        self.n = 0
        self.capped: dict[str, Any] = {}

    def points(self) -> list[dict[str, Any]]:
        return [{}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        self.n, self.capped = p.hpl_n, {}
        if self.n is None:  # a plan made before N was settled at planning time
            derived = hpcc_run.n_for_memory(hpcc_run.memory_bytes(env), p.hpl_memory_fraction, p.hpl_n_cap)
            self.n, self.capped = hpcc_run.bounded_n(env, derived)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        outputs = hpcc_run.run(env, self.n)
        facts = {"ranks": len(env.layout.sut_cpus), "hpl_n": self.n, **self.capped}
        return RawResult(outputs=outputs, facts=facts)

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        found = hpcc.parse(raw.outputs["hpccoutf"], f"{source}.hpccoutf.txt")
        return [m for m in found if m.dims.get("benchmark") == "HPL" and m.metric != "hpl_n"]


def workloads(params: CpuParams) -> list[Workload]:
    chosen = {"pxz": PxzWorkload, "linpack": LinpackWorkload}
    return [chosen[name](params) for name in params.workloads if name in chosen]


EXPERIMENT = Experiment(
    name="cpu",
    notebook="experiments/cpu.ipynb",
    params_model=CpuParams,
    profiles={
        "quick": {"corpus_mb": 32, "hpl_n_cap": 6000},
        "standard": {"corpus_mb": 256, "hpl_n_cap": 20000},
        "paper": {"corpus_mb": 1000, "hpl_n_cap": 100000},
    },
    default_envs=("native", "docker-host-volume"),
    make_workloads=workloads,
    settle=settle,
    schema=Schema(
        workloads={"pxz": WorkloadSchema(series=("level",)), "linpack": WorkloadSchema()},
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
