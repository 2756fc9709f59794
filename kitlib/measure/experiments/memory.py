"""Memory (paper §C–D, Table I): STREAM's four kernels and RandomAccess, each a program of its own.

STREAM (kit-stream): three arrays of doubles, each at least `llc_multiple` times the machine's total
last-level cache (McCalpin's rule), every kernel `stream_ntimes` times, rate from the best pass after
the first. RandomAccess (kit-gups): a table of 2^k words, at least `gups_llc_multiple` times the
last-level cache and `gups_min_table_mb`, far beyond what the TLB maps with base pages, updated
`gups_updates_per_word` times per word (the specification: 4). Sizes are settled when the plan is
made, from this host's caches and memory, and are the same for every environment of the run.

On a host with several NUMA nodes both of the paper's draft configurations run (one node, and all
nodes interleaved, with numactl); on one node only that one exists, and the records say so.
Huge-page settings are recorded with every point.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kitlib.core import caches
from kitlib.core.errors import PlanError
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments import hpcc_run, programs
from kitlib.measure.experiments.base import PROGRAM_START_S, Experiment, RawResult, Workload
from kitlib.measure.peer import Peer
from kitlib.specs.memory import SPEC, MemoryParams

#: share of this host's memory the arrays (or the table) may take
MEMORY_SHARE = 0.6


def numa_nodes() -> int:
    return len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or 1


def _memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def settle(params: MemoryParams, environments: Sequence[str]) -> MemoryParams:
    """STREAM's array length and RandomAccess's table from this host's last-level cache, once for every
    environment of the run; refused when they would not fit in memory."""
    llc = caches.last_level_total()
    basis = f"last-level cache {llc / 2**20:g} MiB (sysfs, all instances)" if llc else "no cache in sysfs"
    llc = llc or caches.FALLBACK_LLC
    update: dict[str, Any] = {}
    if params.stream_elements is None:
        update["stream_elements"] = int(math.ceil(params.llc_multiple * llc / 8))
    if params.gups_log2_words is None:
        floor = max(params.gups_llc_multiple * llc, params.gups_min_table_mb * 2**20) / 8
        update["gups_log2_words"] = max(10, math.ceil(math.log2(floor)))
    sized = params.model_copy(update=update)
    memory = _memory_bytes()
    for what, parameter, need in (
        ("STREAM's three arrays", "stream_elements", 3 * 8 * sized.stream_elements),
        ("RandomAccess's table", "gups_log2_words", 8 * 2**sized.gups_log2_words),
    ):
        if need > MEMORY_SHARE * memory:
            raise PlanError(
                f"memory: {what} would take {need / 2**30:.1f} GiB, more than {MEMORY_SHARE:.0%} of this host's "
                f"{memory / 2**30:.1f} GiB; set -p {parameter} smaller"
            )
    if update:
        basis += (
            f"; arrays {sized.stream_elements} doubles ({params.llc_multiple:g} x LLC), table 2^{sized.gups_log2_words}"
            f" words (>= {params.gups_llc_multiple:g} x LLC and {params.gups_min_table_mb} MiB)"
        )
    else:
        basis = "given"
    return sized.model_copy(update={"sizing_basis": params.sizing_basis or basis})


def _numa_prefix(point: dict[str, Any]) -> list[str]:
    return {
        "one-node": ["numactl", "--cpunodebind=0", "--membind=0"],
        "interleaved": ["numactl", "--interleave=all"],
    }.get(point["numa"], [])


def _threads_env(env: Environment) -> list[str]:
    """One OpenMP thread per CPU of the system under test, each bound to its CPU."""
    return ["env", f"OMP_NUM_THREADS={len(env.layout.sut_cpus)}", "OMP_PROC_BIND=true", "OMP_PLACES=threads"]


class _MemoryProgram(Workload):
    """A memory workload: one of the kit's programs, run once per point on every SUT CPU."""

    program: str
    sut_cores = None
    command_timeout = 1800.0
    capacity_probe = "memory"

    def __init__(self, params: MemoryParams):
        super().__init__(params)
        self.path = ""
        self.facts: dict[str, Any] = {}

    def points(self) -> list[dict[str, Any]]:
        if numa_nodes() > 1:
            return [{"numa": "one-node"}, {"numa": "interleaved"}]
        return [{"numa": "single-node host"}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        self.path = programs.ensure(env, self.program)
        self.facts = {
            "tool": self.program,
            "program_source": programs.source_digest(self.program),
            "threads": len(env.layout.sut_cpus),
            "huge_pages": hpcc_run.huge_pages(env),
            **self.sizes(),
        }

    def sizes(self) -> dict[str, Any]:
        raise NotImplementedError

    def arguments(self) -> list[str]:
        raise NotImplementedError

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        argv = [*_threads_env(env), *_numa_prefix(point), self.path, *self.arguments()]
        output = env.run(argv, timeout=self.command_timeout).output
        programs.check_source(self.program, output, env.label)
        return RawResult(outputs={self.program: output}, facts=dict(self.facts))


class StreamWorkload(_MemoryProgram):
    name = "stream"
    tool = "kit-stream"
    program = "kit-stream"
    size_parameter = "stream_elements"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """Bytes the passes move (16 + 16 + 24 + 24 per element and pass) plus the first touch of the
        three arrays, at this host's bandwidth; half a second for the program's start in its environment
        and its checks (0.4 s measured on a 2-core guest)."""
        p = self.params
        moved = p.stream_ntimes * 80 * p.stream_elements + 3 * 8 * p.stream_elements
        return PROGRAM_START_S + moved / (rates.stream_gbs * 1e9)

    def sizes(self) -> dict[str, Any]:
        p = self.params
        llc = caches.last_level_total() or caches.FALLBACK_LLC
        return {
            "elements": p.stream_elements,
            "array_bytes": 8 * p.stream_elements,
            "array_over_llc": round(8 * p.stream_elements / llc, 3),
            "ntimes": p.stream_ntimes,
        }

    def arguments(self) -> list[str]:
        return [str(self.params.stream_elements), str(self.params.stream_ntimes)]


class RandomAccessWorkload(_MemoryProgram):
    name = "randomaccess"
    tool = "kit-gups"
    program = "kit-gups"
    size_parameter = "gups_log2_words"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """The timed updates and their verification (as many again), plus filling the table and the
        program's start."""
        words = 2**self.params.gups_log2_words
        updates = 2 * words * self.params.gups_updates_per_word
        return PROGRAM_START_S + updates / (rates.gups * 1e9) + 8 * words / (rates.stream_gbs * 1e9)

    def sizes(self) -> dict[str, Any]:
        p = self.params
        return {"table_bytes": 8 * 2**p.gups_log2_words, "updates_per_word": p.gups_updates_per_word}

    def arguments(self) -> list[str]:
        return [str(self.params.gups_log2_words), str(self.params.gups_updates_per_word)]


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=lambda params: [StreamWorkload(params), RandomAccessWorkload(params)],
    settle=settle,
)
