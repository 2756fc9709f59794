"""OLTP scale-out (seed 002, post 2): N independent MariaDB instances, N sysbench clients at once.

The post ran 16 DVD Store instances (PostgreSQL, one client driver of 4 threads each) natively,
in Docker (bridged networking, the database on a host volume) and in VMs, and reported the
aggregate orders per minute normalised to native: Docker "adds little overhead (2-4%)". Here the
database is MariaDB/InnoDB and the client sysbench `oltp_read_write`, as in the `mysql` experiment,
whose server start and sysbench command lines this one reuses.

The N instances run in the environment under test, each with its own data directory, port and
socket: N `mariadbd` processes on `native`, N containers of a Docker label (`containers`; see
`Environment.companion`). Each is prepared and warmed; then every point runs N clients on the peer at once
(same threads, same duration), one per instance, and records each instance's tps and the aggregate
tps over the bundle's wall clock (`kitlib.parsers.scaleout_oltp`).

Placement (a swept point column): `default` leaves the instances to the scheduler over the SUT CPUs;
`pinned` pins instance i (all its threads) to SUT CPU i modulo their count. Where the SUT has fewer
CPUs than instances, pinning shares CPUs and every record says `placement_applicable` False.
"""

from __future__ import annotations

import shlex
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib import cpu_sampler
from kitlib.environments.base import Environment
from kitlib.errors import EnvironmentUnavailable, UnexpectedOutput
from kitlib.experiments import instances
from kitlib.experiments.base import Experiment, RawResult, sorted_within
from kitlib.experiments.instances import PLACEMENTS
from kitlib.experiments.mysql import REPORT_EVERY_S, start_server, sysbench_argv
from kitlib.experiments.scaleout import SUPPORTED_KINDS
from kitlib.parsers import scaleout_oltp
from kitlib.parsers.scaleout_oltp import AGGREGATE
from kitlib.peer import Peer
from kitlib.records import Measurement
from kitlib.schema import FigureSpec, Schema, WorkloadSchema


class ScaleoutOltpParams(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # NaN and inf are no duration nor count

    instances: int = Field(description="independent database instances, one client each (the post: 16)", ge=1, le=64)
    threads: list[int] = Field(description="sysbench threads of every client (the post: 4 per driver)")
    seconds: float = Field(description="duration of each measured run", gt=0, le=3600)
    warmup_seconds: float = Field(2, description="unrecorded run of all clients at once after preparing", ge=0, le=3600)
    tables: int = Field(1, description="sysbench tables per instance", ge=1, le=1000)
    rows: int = Field(
        description="rows per table of every instance; ≤ 1e9, some 250 GB and days of preparing",
        ge=100,
        le=1_000_000_000,
    )
    buffer_pool_mb: int = Field(
        description="InnoDB buffer pool of every instance; ≤ 4 TiB, past any host's memory", ge=16, le=4 * 2**20
    )
    placements: list[str] = Field(default_factory=lambda: list(PLACEMENTS), description="placements swept")

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        return sorted_within(value, 1, 4096, "thread counts")

    _placements = field_validator("placements")(classmethod(lambda cls, value: instances.checked_placements(value)))


class ScaleoutOltpWorkload(instances.ScaledOutWorkload):
    name = "scaleout_oltp_read_write"
    tool = "kit-scaleout-oltp"
    duration_parameter = "seconds"
    time_bound = True

    def __init__(self, params: ScaleoutOltpParams):
        super().__init__(params)
        self.cpus: list[int] = []

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """All clients at once for the point's duration, plus their start and the placement."""
        return self.params.seconds + 2.0

    def points(self) -> list[dict[str, Any]]:
        return [{"placement": p, "threads": t} for p in self.params.placements for t in self.params.threads]

    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        if env.kind not in SUPPORTED_KINDS:
            raise EnvironmentUnavailable(
                f"{env.label}: the OLTP scale-out runs on native and Docker labels only for now "
                f"(one guest per instance is not built yet); got kind {env.kind!r}"
            )
        # a remote SUT's CPUs are not in the layout: every CPU its environment sees
        self.cpus = list(env.layout.sut_cpus) or list(range(int(env.run(["nproc"], timeout=30).output.split()[-1])))
        self.targets, self.pids = [], []
        ports = env.layout.ports[: p.instances]
        self.homes = instances.homes(env, ports)
        for i, (port, home) in enumerate(zip(ports, self.homes, strict=True)):
            root = home.data_dir.rstrip("/")
            datadir = f"{root}/oltp-{i}"
            start_server(home, f"mariadbd-{i}", port, datadir, f"{root}/oltp-{i}.sock", p.buffer_pool_mb)
            argv = ["cat", f"{datadir}/mariadbd.pid"]
            pid = home.run(argv, timeout=30).output.strip()
            if not pid.isdigit():  # taskset needs it; a server without one cannot be placed
                raise UnexpectedOutput(home.label, argv, f"no PID of instance {i}: {pid!r}")
            self.pids.append(pid)
            self.targets.append(home.address_for_peer(port, peer.host_address))
        self.containers = instances.containers(env, self.homes)
        for target in self.targets:
            peer.run(sysbench_argv(target, p.tables, p.rows, "prepare", min(p.tables, 8)), timeout=3600)
        if p.warmup_seconds:
            warm = bundle_script(self._clients(max(p.threads), p.warmup_seconds))
            peer.run(["bash", "-c", warm], timeout=p.warmup_seconds + 300)

    def _clients(self, threads: int, seconds: float, every: int = 0) -> list[list[str]]:
        p = self.params
        return [sysbench_argv(t, p.tables, p.rows, "run", threads, seconds, every) for t in self.targets]

    def place(self, env: Environment, placement: str) -> None:
        """Pin every thread of instance i to SUT CPU i (modulo), or give them all the SUT CPUs back."""
        instances.place(self.homes, self.pids, self.cpus, placement)

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        return scaleout_oltp.intervals(raw.outputs["clients"], f"{source}.clients.txt")

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        assert self.targets, "prepare() first"
        seconds = self.params.seconds if seconds is None else seconds
        self.place(env, point["placement"])
        script = bundle_script(self._clients(point["threads"], seconds, every=REPORT_EVERY_S))
        with cpu_sampler.CpuSampler(env.layout.sut_cpus) as cpu:
            output = peer.run(["bash", "-c", script], timeout=seconds + 300).output
        busy = cpu.utilization
        extra = [Measurement("cpu_utilization", busy, "%", {"instance": AGGREGATE})] if busy is not None else []
        facts = {
            "cpu_method": cpu_sampler.METHOD,
            "sut_cpu_count": len(self.cpus),
            "placement_applicable": len(self.cpus) >= self.params.instances,
        }
        return RawResult(outputs={"clients": output}, extra=extra, facts=facts)

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        p = self.params
        return {
            **point,
            "instances": p.instances,
            "containers": self.containers,
            "tables": p.tables,
            "rows": p.rows,
            "buffer_pool_mb": p.buffer_pool_mb,
            "seconds": p.seconds,
        }


def bundle_script(clients: list[list[str]]) -> str:
    """Bash: every client at once, each into its own file, reported after `== instance i` (the parser's format)."""
    jobs = [f'{shlex.join(argv)} > "$d/{i}" 2>&1' for i, argv in enumerate(clients)]
    return instances.at_once(jobs, [f"echo '== instance {i}'; cat \"$d/{i}\"" for i in range(len(clients))])


EXPERIMENT = Experiment(
    name="scaleout-oltp",
    notebook="experiments/scaleout-oltp.ipynb",
    params_model=ScaleoutOltpParams,
    profiles={
        "quick": {
            "instances": 2,
            "threads": [4],
            "seconds": 8,
            "warmup_seconds": 2,
            "rows": 5000,
            "buffer_pool_mb": 32,
        },
        "standard": {
            "instances": 4,
            "threads": [4],
            "seconds": 30,
            "warmup_seconds": 10,
            "rows": 100_000,
            "buffer_pool_mb": 256,
        },
        "paper": {
            "instances": 16,
            "threads": [4],
            "seconds": 120,
            "warmup_seconds": 30,
            "rows": 500_000,
            "buffer_pool_mb": 512,
        },
    },
    default_envs=("native", "docker-host-volume", "docker-nat-volume"),
    make_workloads=lambda params: [ScaleoutOltpWorkload(params)],
    schema=Schema(
        workloads={"scaleout_oltp_read_write": WorkloadSchema(sweep="threads", series=("placement",))},
        figures=(FigureSpec("scaleout-oltp-vroom-fig2-normalised", "scaleout_oltp.scaleout_oltp_figure"),),
        tools=("mariadb-server",),
        client_tools=("sysbench",),
        claims=("scaleout_oltp_docker_adds_little",),
    ),
)
