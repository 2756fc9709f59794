"""MySQL (paper §I, Table III, Figs. 10–13): sysbench oltp_read_write against MariaDB/InnoDB.

MariaDB (Debian's MySQL) runs in the environment with its data directory on the storage under
test (volume or the container's overlay filesystem), pinned to the system-under-test CPUs, its
buffer pool large enough to cache every read (paper: 3 GB for 2 M rows; the profile scales rows
and pool together). sysbench runs on the peer, as the paper's client ran on the load-generator
side. The database is prepared once per environment and the server warmed before the first
measured point; threads are swept to past saturation. The CPU utilization of the system under
test's CPUs is sampled from /proc/stat over every measured interval.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib import cpu_sampler
from kitlib.environments.base import Environment
from kitlib.experiments.base import Experiment, RawResult, Workload, sorted_within
from kitlib.parsers import sysbench
from kitlib.peer import Peer
from kitlib.records import Measurement
from kitlib.schema import ClosedLoop, FigureSpec, Schema, WorkloadSchema

USER = "sbtest"
#: seconds between sysbench's intermediate reports (its smallest): the sub-intervals of a point's steadiness
REPORT_EVERY_S = 1


class MysqlParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    threads: list[int] = Field(description="sysbench threads swept (paper: to saturation)")
    seconds: float = Field(description="duration of each measured run", gt=0, le=3600)
    warmup_seconds: float = Field(
        5, description="unrecorded run before measuring; ≤ an hour, like a run", ge=0, le=3600
    )
    tables: int = Field(1, description="sysbench tables; ≤ 1000, each prepared before the run", ge=1, le=1000)
    rows: int = Field(
        description="rows per table (paper: 2,000,000); ≤ 1e9, some 250 GB and days of preparing",
        ge=100,
        le=1_000_000_000,
    )
    buffer_pool_mb: int = Field(
        description="InnoDB buffer pool (paper: 3 GB); ≤ 4 TiB, past any host's memory", ge=16, le=4 * 2**20
    )
    server_cores: int = Field(
        1, description="CPUs the server is pinned to; ≤ 1024, more than hosts have", ge=1, le=1024
    )

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 4096, "thread counts")


class OltpWorkload(Workload):
    name = "oltp_read_write"
    tool = "sysbench"
    ports_needed = 1
    duration_parameter = "seconds"
    time_bound = True

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        return self.params.seconds + 2.0

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        return sysbench.intervals(raw.outputs["sysbench"], f"{source}.sysbench.txt")

    def __init__(self, params: MysqlParams):
        super().__init__(params)
        self.sut_cores = params.server_cores
        self.target: tuple[str, int] | None = None

    def points(self) -> list[dict[str, Any]]:
        return [{"threads": t} for t in self.params.threads]

    def _sysbench(self, action: str, threads: int = 1, seconds: float | None = None, every: int = 0) -> list[str]:
        assert self.target is not None
        return sysbench_argv(self.target, self.params.tables, self.params.rows, action, threads, seconds, every)

    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        port = env.layout.ports[0]
        start_server(env, "mariadbd", port, f"{env.data_dir}/mysql", f"{env.data_dir}/mysql.sock", p.buffer_pool_mb)
        self.target = env.address_for_peer(port, peer.host_address)
        peer.run(self._sysbench("prepare", threads=min(p.tables, 8)), timeout=3600)
        if p.warmup_seconds:
            peer.run(self._sysbench("run", max(p.threads), p.warmup_seconds), timeout=p.warmup_seconds + 120)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        seconds = self.params.seconds if seconds is None else seconds
        argv = self._sysbench("run", point["threads"], seconds, every=REPORT_EVERY_S)
        with cpu_sampler.CpuSampler(env.layout.sut_cpus) as cpu:
            result = peer.run(argv, timeout=seconds + 300, check=False)
        extra = [Measurement("cpu_utilization", cpu.utilization, "%")] if cpu.utilization is not None else []
        facts = {
            "cpu_method": cpu_sampler.METHOD,
            "rows": self.params.rows,
            "tables": self.params.tables,
            "buffer_pool_mb": self.params.buffer_pool_mb,
        }
        return RawResult(outputs={"sysbench": result.output}, extra=extra, facts=facts)


def sysbench_argv(
    target: tuple[str, int],
    tables: int,
    rows: int,
    action: str,
    threads: int = 1,
    seconds: float | None = None,
    every: int = 0,
) -> list[str]:
    """sysbench oltp_read_write against one server as the kit's user (`prepare`, `run`, …); a timed run
    reports its rate every `every` seconds (0: only at the end)."""
    host, port = target
    argv = [
        "sysbench",
        "oltp_read_write",
        "--db-driver=mysql",
        f"--mysql-host={host}",
        f"--mysql-port={port}",
        f"--mysql-user={USER}",
        f"--mysql-password={USER}",
        f"--mysql-db={USER}",
        f"--tables={tables}",
        f"--table-size={rows}",
        f"--threads={threads}",
    ]
    if seconds is not None:
        argv += [f"--time={seconds:g}", f"--report-interval={every}"]
    return [*argv, action]


def start_server(env: Environment, name: str, port: int, datadir: str, socket: str, buffer_pool_mb: int) -> None:
    """A fresh MariaDB in `datadir` serving `port` and `socket`, with the empty database and user sysbench
    logs in as; the PID file is `{datadir}/mariadbd.pid`. Shared by every experiment that runs OLTP."""
    env.run(["rm", "-rf", datadir], timeout=120)
    env.run(["mariadb-install-db", f"--datadir={datadir}", "--user=root", "--skip-test-db"], timeout=300)
    env.start_service(
        name,
        [
            "mariadbd",
            f"--datadir={datadir}",
            "--user=root",
            f"--port={port}",
            "--bind-address=0.0.0.0",
            f"--socket={socket}",
            f"--pid-file={datadir}/mariadbd.pid",
            f"--innodb-buffer-pool-size={buffer_pool_mb}M",
            "--skip-log-bin",
            "--skip-name-resolve",
            "--max-connections=5000",
            "--innodb-flush-log-at-trx-commit=1",
        ],
        ready_port=port,
        ready_timeout=180,
    )
    env.run(
        [
            "mariadb",
            f"--socket={socket}",
            "-e",
            f"CREATE DATABASE {USER}; CREATE USER '{USER}'@'%' IDENTIFIED BY '{USER}'; "
            f"GRANT ALL ON {USER}.* TO '{USER}'@'%';",
        ],
        timeout=60,
    )


EXPERIMENT = Experiment(
    name="mysql",
    notebook="experiments/mysql.ipynb",
    params_model=MysqlParams,
    profiles={
        "quick": {
            "threads": [1, 4, 16],
            "seconds": 8,
            "warmup_seconds": 3,
            "rows": 20_000,
            "buffer_pool_mb": 128,
        },
        "standard": {"threads": [1, 2, 4, 8, 16, 32, 64], "seconds": 20, "rows": 200_000, "buffer_pool_mb": 512},
        "paper": {
            "threads": [1, 2, 4, 8, 16, 32, 64, 128, 256],
            "seconds": 60,
            "rows": 2_000_000,
            "buffer_pool_mb": 3072,
        },
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume", "docker-nat-overlay"),
    make_workloads=lambda params: [OltpWorkload(params)],
    schema=Schema(
        workloads={
            "oltp_read_write": WorkloadSchema(
                sweep="threads", closed_loop=ClosedLoop("tps", "latency_mean", outstanding="threads")
            )
        },
        figures=(FigureSpec("mysql-fig10-13", "mysql.mysql_figures"),),
        tools=("mariadb-server",),
        client_tools=("sysbench",),
        claims=(
            "overlay_slows_mysql",
            "docker_near_native_mysql",
            "kvm_mysql_loss",
            "nat_mysql_little_overhead",
            "docker_mysql_latency_rises_faster",
            "native_mysql_peak_cpu_higher",
        ),
    ),
)
