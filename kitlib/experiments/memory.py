"""Memory (paper §C–D, Table I): STREAM and RandomAccess from one hpcc run per point.

STREAM's arrays are sized from the environment's last-level cache (at least `llc_multiple` times
it, hpcc sizing them from the HPL problem); RandomAccess's table is half the memory hpcc uses, far
beyond TLB reach. Huge-page settings are recorded. On a host with several NUMA nodes both of the
paper's draft configurations run (one node, and all nodes interleaved, with numactl); on one node
only that one exists, and the records say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kitlib.environments.base import Environment
from kitlib.experiments import hpcc_run
from kitlib.experiments.base import Experiment, RawResult, Workload
from kitlib.parsers import hpcc
from kitlib.peer import Peer
from kitlib.records import Measurement
from kitlib.schema import FigureSpec, Schema, WorkloadSchema

WORKLOAD_OF = {"STREAM": "stream", "RandomAccess": "randomaccess"}


def numa_nodes() -> int:
    return len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or 1


class MemoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    llc_multiple: float = Field(4.0, description="STREAM arrays at least this many times the last-level cache", gt=0)
    hpl_n: int | None = Field(None, description="hpcc problem size; None = derived from the cache", ge=100)


class HpccMemoryWorkload(Workload):
    """One hpcc run per point gives both STREAM (per kernel) and RandomAccess records."""

    name = "hpcc"
    tool = "hpcc"
    sut_cores = None

    def __init__(self, params: MemoryParams):
        super().__init__(params)
        self.n = 0
        self.facts: dict[str, Any] = {}

    def points(self) -> list[dict[str, Any]]:
        if numa_nodes() > 1:
            return [{"numa": "one-node"}, {"numa": "interleaved"}]
        return [{"numa": "single-node host"}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        llc = hpcc_run.llc_bytes(env)
        ranks = len(env.layout.sut_cpus)
        self.n, capped = self.params.hpl_n, {}
        if self.n is None:
            self.n, capped = hpcc_run.bounded_n(env, hpcc_run.n_for_stream(llc, ranks, self.params.llc_multiple))
        self.facts = {"llc_bytes": llc, "ranks": ranks, "hpl_n": self.n, "huge_pages": hpcc_run.huge_pages(env)}
        self.facts.update(capped)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        prefix = {
            "one-node": ["numactl", "--cpunodebind=0", "--membind=0"],
            "interleaved": ["numactl", "--interleave=all"],
        }.get(point["numa"], [])
        return RawResult(outputs=hpcc_run.run(env, self.n, prefix=prefix), facts=dict(self.facts))

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        found = hpcc.parse(raw.outputs["hpccoutf"], f"{source}.hpccoutf.txt")
        kept = []
        for m in found:
            workload = WORKLOAD_OF.get(m.dims.get("benchmark"))
            if workload:
                kept.append(Measurement(m.metric, m.value, m.unit, m.dims, workload=workload))
        vector = next(m.value for m in found if m.metric == "vector_size")
        array_bytes = vector * 8
        return kept + [
            Measurement(
                "array_over_llc",
                array_bytes / self.facts["llc_bytes"],
                "ratio",
                {"benchmark": "STREAM"},
                workload="stream",
            )
        ]


EXPERIMENT = Experiment(
    name="memory",
    notebook="experiments/memory.ipynb",
    params_model=MemoryParams,
    profiles={"quick": {}, "standard": {}, "paper": {"llc_multiple": 8.0}},
    default_envs=("native", "docker-host-volume"),
    presets={
        # seed 003 (§4.2, Table 2): STREAM with arrays beyond the cache (the kit's sizing rule)
        "seed003-stream": {"llc_multiple": 4.0},
    },
    make_workloads=lambda params: [HpccMemoryWorkload(params)],
    schema=Schema(
        workloads={
            "stream": WorkloadSchema(series=("kernel", "variant")),
            "randomaccess": WorkloadSchema(series=("variant",)),
        },
        figures=(FigureSpec("memory-stream-kernels", "memory.stream_kernels", ("stream",)),),
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
