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
tps over the bundle's wall clock (`kitlib.measure.parsers.scaleout_oltp`).

Placement (a swept point column): `default` leaves the instances to the scheduler over the SUT CPUs;
`pinned` pins instance i (all its threads) to SUT CPU i modulo their count. Where the SUT has fewer
CPUs than instances, pinning shares CPUs and every record says `placement_applicable` False.
"""

from __future__ import annotations

import shlex
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable, UnexpectedOutput
from kitlib.core.records import Measurement
from kitlib.measure import cpu_sampler
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments import instances
from kitlib.measure.experiments.base import Experiment, RawResult
from kitlib.measure.experiments.mysql import REPORT_EVERY_S, start_server, sysbench_argv
from kitlib.measure.parsers import scaleout_oltp
from kitlib.measure.peer import Peer
from kitlib.specs.scaleout import SUPPORTED_KINDS
from kitlib.specs.scaleout_oltp import AGGREGATE, SPEC, ScaleoutOltpParams


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
        self.cpus = instances.sut_cpus(env)
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
    spec=SPEC,
    make_workloads=lambda params: [ScaleoutOltpWorkload(params)],
)
