"""Block I/O (paper §G, Figs. 5–7): fio with libaio and O_DIRECT on the storage under test.

Sequential read and write with 1 MB blocks; random read, write and a 70/30 mix with 4 kB blocks at
the profile's iodepth (paper: 128); random read at concurrency 16 for the completion-latency CDF.
The test file lives on the environment's data directory: the host filesystem (`native`), a Docker
volume, or the container's overlay filesystem. It is laid out once per environment and reused. A
preflight refuses tmpfs (O_DIRECT would measure memory) and too little free space, clearly.
"""

from __future__ import annotations

from typing import Any

from kitlib.core.errors import EnvironmentUnavailable, Notice
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Experiment, RawResult, Workload
from kitlib.measure.parsers import fio_iops_log
from kitlib.measure.peer import Peer
from kitlib.specs.block import JOBS, SPEC, BlockParams

PERCENTILES = "1:5:10:20:30:40:50:60:70:80:90:95:99:99.5:99.9"

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
#: then `== end` (`kitlib.measure.parsers.fio_iops_log`); each removed once printed
TAKE_LOGS = (
    'printf "%s\\n" "$2"; for f in "$1"_iops.*.log; do [ -e "$f" ] || exit 1; '
    'echo "== $f"; cat -- "$f"; rm -f -- "$f"; done; echo "== end"'
)


def in_folder(folder: str, argv: list[str]) -> list[str]:
    """argv run with `folder` as its working directory (passed as an argument, never as script text)."""
    return ["sh", "-c", IN_FOLDER, "sh", folder, *argv]


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
    spec=SPEC,
    make_workloads=workloads,
)
