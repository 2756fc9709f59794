"""Block I/O (paper §G, Figs. 5–7): fio with libaio and O_DIRECT on the storage under test.

Sequential read and write with 1 MB blocks; random read, write and a 70/30 mix with 4 kB blocks at
the profile's iodepth (paper: 128); random read at concurrency 16 for the completion-latency CDF.
The test file lives on the environment's data directory: the host filesystem (`native`), a Docker
volume, or the container's overlay filesystem. It is laid out once per environment and reused. A
preflight refuses tmpfs (O_DIRECT would measure memory) and too little free space, clearly.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.environments.base import Environment
from kitlib.errors import EnvironmentUnavailable, Notice
from kitlib.experiments.base import Experiment, RawResult, Workload, known_names
from kitlib.parsers import fio_iops_log
from kitlib.peer import Peer
from kitlib.schema import FigureSpec, Schema, WorkloadSchema

PERCENTILES = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9"
#: workload -> (fio rw, block size, iodepth from the profile or fixed, extra args)
JOBS = {
    "seq_read": ("read", "1M", None, []),
    "seq_write": ("write", "1M", None, []),
    "rand_read": ("randread", "4k", None, []),
    "rand_write": ("randwrite", "4k", None, []),
    "rand_mixed": ("randrw", "4k", None, ["--rwmixread=70"]),
    "rand_read_latency": ("randread", "4k", 16, []),
}

#: sh: whether the file $1 exists with at least $2 bytes (paths arrive as arguments, never as script text)
LAID_OUT = 'test "$(stat -c %s -- "$1" 2>/dev/null || echo 0)" -ge "$2"'
#: sh: whether a 4 kB O_DIRECT write to $1 succeeds (its status, once the probe file is removed)
DIRECT_PROBE = 'dd if=/dev/zero of="$1" bs=4096 count=1 oflag=direct 2>&1; status=$?; rm -f -- "$1"; exit $status'
#: sh: the rest of the arguments run in folder $1. fio is given its file relative to the data directory:
#: in an option's value `;` and `#` start a comment and `:` separates files, so a path holding them
#: would make fio write to a prefix of it, next to the data directory.
IN_FOLDER = 'cd -- "$1" && shift && exec "$@"'
TEST_FILE = "fio-test"
#: fio's IOPS log of a point (`<prefix>_iops.<job>.log` in the data directory), averaged over windows of
#: LOG_AVG_MSEC: the sub-intervals of the point's steadiness
IOPS_LOG, LOG_AVG_MSEC = "kit-fio", 250
#: sh: the IOPS logs of prefix $1 (relative to the folder), each after `== <file>`, under the header $2,
#: then `== end` (`kitlib.parsers.fio_iops_log`); each removed once printed
TAKE_LOGS = (
    'printf "%s\\n" "$2"; for f in "$1"_iops.*.log; do [ -e "$f" ] || exit 1; '
    'echo "== $f"; cat -- "$f"; rm -f -- "$f"; done; echo "== end"'
)


def in_folder(folder: str, argv: list[str]) -> list[str]:
    """argv run with `folder` as its working directory (passed as an argument, never as script text)."""
    return ["sh", "-c", IN_FOLDER, "sh", folder, *argv]


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


class FioWorkload(Workload):
    tool = "fio"
    sut_cores = None
    duration_parameter = "runtime"
    time_bound = True

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        return fio_iops_log.intervals(raw.series["iops-log"], f"{source}.iops-log.txt")

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        return self.params.runtime + 1.0

    def __init__(self, params: BlockParams, name: str):
        super().__init__(params)
        self.name = name
        self.facts: dict[str, Any] = {}

    def points(self) -> list[dict[str, Any]]:
        rw, bs, depth, _ = JOBS[self.name]
        return [{"rw": rw, "block_size": bs, "iodepth": depth or self.params.iodepth}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        self.facts = preflight(env, self.params.file_mb)
        path = f"{env.data_dir}/{TEST_FILE}"
        size = str(self.params.file_mb * 1024 * 1024)
        exists = env.run(["sh", "-c", LAID_OUT, "sh", path, size], timeout=30, check=False)
        if exists.returncode != 0:
            layout = [
                "fio",
                "--name=layout",
                f"--filename={TEST_FILE}",
                f"--size={self.params.file_mb}M",
                "--rw=write",
                "--bs=1M",
                "--ioengine=libaio",
                "--direct=1",
                "--iodepth=16",
            ]
            env.run(in_folder(env.data_dir, layout), timeout=3600)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        seconds = self.params.runtime if seconds is None else seconds
        _, _, _, extra = JOBS[self.name]
        argv = [
            "fio",
            f"--name={self.name}",
            f"--filename={TEST_FILE}",
            f"--size={self.params.file_mb}M",
            f"--rw={point['rw']}",
            f"--bs={point['block_size']}",
            "--ioengine=libaio",
            f"--direct={self.facts['direct']}",
            f"--iodepth={point['iodepth']}",
            f"--runtime={seconds:g}",
            "--time_based",
            "--output-format=json",
            f"--percentile_list={PERCENTILES}",
            f"--write_iops_log={IOPS_LOG}",
            f"--log_avg_msec={LOG_AVG_MSEC}",
            *extra,
        ]
        if self.params.numjobs > 1:
            argv += [f"--numjobs={self.params.numjobs}", "--group_reporting"]
        output = env.run(in_folder(env.data_dir, argv), timeout=seconds + 300).output
        header = fio_iops_log.HEADER.format(avg_msec=LOG_AVG_MSEC, runtime=seconds)
        logs = env.run(in_folder(env.data_dir, ["sh", "-c", TAKE_LOGS, "sh", IOPS_LOG, header]), timeout=60).output
        facts = {**self.facts, "numjobs": self.params.numjobs}
        return RawResult(outputs={"fio": output}, facts=facts, series={"iops-log": logs})


def preflight(env: Environment, file_mb: int) -> dict[str, Any]:
    """Filesystem type, free space and O_DIRECT support where the test file goes; refuses clearly."""
    fs = env.run(["stat", "-f", "-c", "%T", env.data_dir], timeout=30).output.strip()
    if fs == "tmpfs":
        raise EnvironmentUnavailable(f"{env.label}: {env.data_dir} is tmpfs; fio must run on a real filesystem")
    free = env.run(["df", "-Pk", env.data_dir], timeout=30).output.splitlines()[-1].split()[3]
    needed_kb = file_mb * 1024 * 1.1
    if int(free) < needed_kb:
        raise EnvironmentUnavailable(
            f"{env.label}: {env.data_dir} has {int(free) // 1024} MB free, the {file_mb} MB test file needs "
            f"{int(needed_kb) // 1024} MB; choose a smaller file_mb or free space"
        )
    probe = env.run(["sh", "-c", DIRECT_PROBE, "sh", f"{env.data_dir}/.kit-direct"], timeout=60, check=False)
    direct = 1 if probe.returncode == 0 else 0
    if not direct:
        import warnings

        warnings.warn(
            f"{env.label}: O_DIRECT is not supported on {fs}; fio runs buffered (direct=0)", Notice, stacklevel=2
        )
    return {"filesystem": fs, "direct": direct, "file_mb": file_mb}


def workloads(params: BlockParams) -> list[Workload]:
    return [FioWorkload(params, name) for name in params.workloads if name in JOBS]


EXPERIMENT = Experiment(
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
    make_workloads=workloads,
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
