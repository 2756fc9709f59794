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

from kitlib.core.records import Measurement
from kitlib.measure import capacity, cpu_sampler
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Experiment, RawResult, Workload
from kitlib.measure.parsers import sysbench
from kitlib.measure.peer import Peer
from kitlib.specs.mysql import SPEC, MysqlParams

USER = "sbtest"
#: seconds between sysbench's intermediate reports (its smallest): the sub-intervals of a point's steadiness
REPORT_EVERY_S = 1


class OltpWorkload(Workload):
    name = "oltp_read_write"
    tool = "sysbench"
    ports_needed = 1
    duration_parameter = "seconds"
    time_bound = True
    #: a quick profile's database fits in the buffer pool: server and client spend the point on CPU time
    capacity_probe = capacity.CPU

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


def start_server(
    env: Environment, name: str, port: int, datadir: str, socket: str, buffer_pool_mb: int, user: str = USER
) -> None:
    """A fresh MariaDB in `datadir` serving `port` and `socket`, with an empty database and a user of the
    same name (`user`, its password the same: sysbench's by default) allowed in from anywhere; the PID
    file is `{datadir}/mariadbd.pid`. Shared by every experiment that runs a database."""
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
            f"CREATE DATABASE {user}; CREATE USER '{user}'@'%' IDENTIFIED BY '{user}'; "
            f"GRANT ALL ON {user}.* TO '{user}'@'%';",
        ],
        timeout=60,
    )


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=lambda params: [OltpWorkload(params)],
)
