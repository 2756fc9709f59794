"""CPU (paper §A–B, Table I): PXZ as parallel LZMA compression, and Linpack.

PXZ: `xz -T threads -2` of a deterministic generated text corpus held in the page cache, output
discarded (the paper: 1 GB enwik9, 32 threads, level 2); MB/s of input. Linpack: the shared-memory
LINPACK the paper ran (Intel's optimized LINPACK: LU factorisation with partial pivoting of one
dense system), here `kit-linpack` over OpenBLAS's LAPACK `dgesv`, threaded over every CPU of the
environment (one OpenMP thread per CPU, bound), `linpack_trials` solves of the same matrix; GFLOPS
is the mean of the trials after the first. N is the same in every environment of a run: derived when
the plan is made from the smallest environment's memory (the host's for native and containers, the
guest's for VMs), capped by the profile (and under software emulation), and recorded in the plan as
the parameter `linpack_n` with how it was chosen (`linpack_n_basis`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kitlib.core import services
from kitlib.core.errors import PlanError
from kitlib.measure.environments import vm
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments import hpcc_run, programs
from kitlib.measure.experiments.base import PROGRAM_START_S, Experiment, RawResult, Workload
from kitlib.measure.peer import Peer
from kitlib.specs.cpu import SPEC, CpuParams
from kitlib.specs.labels import is_emulated, parse_label

CORPUS_SEED = 1_000_000_000  # the size of enwik9, as a fixed seed


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
    """One Linpack N for every environment of the run, from the smallest one's memory."""
    if params.linpack_n is not None:
        return params.model_copy(update={"linpack_n_basis": params.linpack_n_basis or "given"})
    memory = {label: environment_memory_bytes(label) for label in environments}
    smallest = min(memory, key=memory.get)
    # two N x N matrices of doubles: the one solved and the pristine copy every trial starts from
    n = linpack_n = hpcc_run.n_for_memory(memory[smallest] / 2, params.linpack_memory_fraction, params.linpack_n_cap)
    basis = (
        f"{params.linpack_memory_fraction:g} of {memory[smallest] / 2**30:.1f} GiB ({smallest}, the smallest) "
        f"for two matrices, cap {params.linpack_n_cap}"
    )
    if any(is_emulated(label) for label in environments) and n > EMULATED_N_CAP:
        linpack_n = EMULATED_N_CAP
        basis += f"; {n} capped at {linpack_n} by software emulation"
    return params.model_copy(update={"linpack_n": max(100, linpack_n), "linpack_n_basis": basis})


#: largest derived N under software emulation: 2/3 N^3 flops at ~0.1 GFLOPS is about 7 s a trial at 1000
EMULATED_N_CAP = 1000


class PxzWorkload(Workload):
    name = "pxz"
    tool = "xz"
    sut_cores = None
    size_parameter = "corpus_mb"
    capacity_probe = "cpu"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """The compression at this host's xz rate (level 2), plus generating and reading the corpus once per
        environment (counted with each point: an upper bound)."""
        return PROGRAM_START_S + self.params.corpus_mb * 1.048576 / rates.xz_mbps + self.params.corpus_mb / 50.0

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
        env.run(
            ["sh", "-c", 'cat "$1" > /dev/null', "sh", path], timeout=600
        )  # into the page cache, as the paper's RAM
        self.facts = {"corpus_bytes": size, "corpus_sha256": digest, "threads": len(env.layout.sut_cpus)}

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        threads = len(env.layout.sut_cpus)
        script = (
            'echo kit-input-bytes $(stat -c %s "$1"); TIMEFORMAT="kit-elapsed-seconds %3R";'
            ' time xz -T "$2" "-$3" -c -v < "$1" > /dev/null'
        )
        corpus = f"{env.data_dir}/corpus.txt"
        argv = ["bash", "-c", script, "bash", corpus, str(threads), str(int(point["level"]))]
        output = env.run(argv, timeout=3600).output
        return RawResult(outputs={"xz": output}, facts=dict(self.facts))


class LinpackWorkload(Workload):
    name = "linpack"
    tool = "kit-linpack"
    sut_cores = None
    size_parameter = "linpack_n"
    capacity_probe = "cpu"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """Every trial's 2/3 N^3 flops at this host's rate, plus filling the matrix (0.4 s at N = 6000 on a
        2-core guest) and the program's start."""
        n = self.params.linpack_n or 0
        return PROGRAM_START_S + self.params.linpack_trials * (2 / 3 * n**3) / (rates.gflops * 1e9) + n * n / 1e8

    def __init__(self, params: CpuParams):
        super().__init__(params)
        self.path = ""

    def points(self) -> list[dict[str, Any]]:
        return [{}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        if self.params.linpack_n is None:
            raise PlanError("cpu: linpack_n is settled when the plan is made; this plan has none (make it again)")
        self.path = programs.ensure(env, "kit-linpack")

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        threads = len(env.layout.sut_cpus)
        n, trials = self.params.linpack_n, self.params.linpack_trials
        omp = [f"OMP_NUM_THREADS={threads}", f"OPENBLAS_NUM_THREADS={threads}", "OMP_PROC_BIND=true"]
        output = env.run(["env", *omp, "OMP_PLACES=threads", self.path, str(n), str(trials)], timeout=3600).output
        programs.check_source("kit-linpack", output, env.label)
        facts = {
            "tool": "kit-linpack",
            "program_source": programs.source_digest("kit-linpack"),
            "threads": threads,
            "linpack_n": n,
            "trials": trials,
        }
        return RawResult(outputs={"kit-linpack": output}, facts=facts)


def workloads(params: CpuParams) -> list[Workload]:
    chosen = {"pxz": PxzWorkload, "linpack": LinpackWorkload}
    return [chosen[name](params) for name in params.workloads if name in chosen]


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=workloads,
    settle=settle,
)
