"""Network (paper §E–F): bulk TCP bandwidth both ways, and request-response round trips.

The server runs in the environment under test, the client on the peer (the paper's second
machine; here a network namespace behind a veth pair, so Docker NAT is the real DNAT path).

- bandwidth: one TCP stream with nuttcp, the system under test transmitting (`sut_tx`) and
  receiving (`sut_rx`); Gbps, nuttcp's CPU figures, and the host's CPU utilization over the
  transfer from /proc/stat (the paper: `perf stat -a`).
- rr: one transaction in flight, TCP and UDP. sockperf ping-pong by default (Debian main; request
  and response are the same size, `msg_bytes`, recorded), in full round trips (`--full-rtt`); or,
  with `rr_tool="netperf"` where netperf is installed on the peer and netserver in every
  environment, netperf TCP_RR/UDP_RR with the paper's 100-byte request and 200-byte response.
  sockperf's full log, reduced on the peer to the mean round trip per quarter second, gives the
  sub-intervals its points are sized by for steady state (netperf prints none).
"""

from __future__ import annotations

import math
import re
import shutil
from typing import Any

from kitlib.core import services
from kitlib.core.errors import EnvironmentUnavailable, KitError
from kitlib.core.records import Measurement
from kitlib.measure import capacity, cpu_sampler
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Experiment, RawResult, Workload
from kitlib.measure.parsers import nuttcp, rtt_windows
from kitlib.measure.peer import Peer
from kitlib.specs.net import SPEC, NetParams

PORTS = 5  # nuttcp control + data, rr TCP, rr UDP, netperf data
#: seconds between nuttcp's interval reports: the sub-intervals of a transfer's steadiness
REPORT_EVERY_S = 0.5
#: seconds of sockperf's round trips per sub-interval (some 4,500 messages on a 2-core machine)
WINDOW_S = 0.25
#: where the peer's mktemp puts sockperf's full log, and the only kind of path it may answer
LOG_TEMPLATE = "/tmp/kit-sockperf-log.XXXXXXXXXX"
LOG_PATH = re.compile(r"/tmp/kit-sockperf-log\.[A-Za-z0-9]{10}")


class BandwidthWorkload(Workload):
    name = "bandwidth"
    tool = "nuttcp"
    ports_needed = PORTS
    duration_parameter = "seconds"
    time_bound = True
    #: between the host's own addresses, or its bridge, a stream is as fast as the CPUs copy its bytes
    capacity_probe = capacity.CPU

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float]:
        return nuttcp.intervals(raw.outputs["nuttcp"], f"{source}.nuttcp.txt")

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        return self.params.seconds + 1.5

    def __init__(self, params: NetParams):
        super().__init__(params)
        self.target: tuple[str, int, int] | None = None

    def points(self) -> list[dict[str, Any]]:
        return [{"direction": "sut_tx"}, {"direction": "sut_rx"}]

    def prepare(self, env: Environment, peer: Peer) -> None:
        control, data = env.layout.ports[0], env.layout.ports[1]
        env.start_service(
            "nuttcp", ["nuttcp", "-S", "--nofork", "-P", str(control), "-p", str(data)], ready_port=control
        )
        host, _ = env.address_for_peer(control, peer.host_address)
        self.target = (host, control, data)

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        assert self.target is not None, "prepare() first"
        seconds = self.params.seconds if seconds is None else seconds
        host, control, data = self.target
        direction = "-r" if point["direction"] == "sut_tx" else "-t"
        argv = [
            "nuttcp",
            direction,
            "-fparse",
            f"-i{REPORT_EVERY_S:g}",
            "-T",
            f"{seconds:g}",
            "-P",
            str(control),
            "-p",
            str(data),
            host,
        ]
        with cpu_sampler.CpuSampler(env.layout.sut_cpus) as sut, cpu_sampler.CpuSampler() as host:
            output = peer.run(argv, timeout=seconds + 60).output
        extra = [
            Measurement(metric, sampler.utilization, "%")
            for metric, sampler in (("cpu_utilization", sut), ("cpu_utilization_host", host))
            if sampler.utilization is not None
        ]
        facts = {"cpu_method": cpu_sampler.METHOD, "sut_cpus": ",".join(map(str, env.layout.sut_cpus))}
        return RawResult(outputs={"nuttcp": output}, extra=extra, facts=facts)


class RequestResponseWorkload(Workload):
    name = "rr"
    ports_needed = PORTS
    duration_parameter = "seconds"
    time_bound = True
    #: one transaction in flight: each round trip wakes the other side on its CPU twice, the path the
    #: wake-up probe times (`kitlib.measure.capacity`), which a busy host slows while arithmetic runs on
    capacity_probe = capacity.WAKEUP

    def intervals(self, raw: RawResult, source: str) -> tuple[list[float], float] | None:
        """sockperf's round trips per window (netperf reports none: its points are not sized)."""
        if "rtt-windows" not in raw.series:
            return None
        return rtt_windows.intervals(raw.series["rtt-windows"], f"{source}.rtt-windows.txt")

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        return self.params.seconds + 1.5

    def __init__(self, params: NetParams):
        super().__init__(params)
        self.tool = "sockperf"
        self.targets: dict[str, tuple[str, int]] = {}

    def points(self) -> list[dict[str, Any]]:
        return [{"protocol": "tcp"}, {"protocol": "udp"}]

    def _use_netperf(self, env: Environment) -> bool:
        if self.params.rr_tool == "sockperf":
            return False
        present = env.run(["sh", "-c", "command -v netserver"], timeout=30, check=False).returncode == 0
        if not present or shutil.which("netperf") is None:
            raise EnvironmentUnavailable(f"{env.label}: rr_tool=netperf needs netserver here and netperf on the peer")
        return True

    def prepare(self, env: Environment, peer: Peer) -> None:
        tcp, udp, data = env.layout.ports[2], env.layout.ports[3], env.layout.ports[4]
        if self._use_netperf(env):
            self.tool = "netperf"
            env.start_service("netserver", ["netserver", "-D", "-f", "-p", str(tcp)], ready_port=tcp)
        else:
            self.tool = "sockperf"
            env.start_service(
                "sockperf-tcp", ["sockperf", "sr", "--tcp", "-i", "0.0.0.0", "-p", str(tcp)], ready_port=tcp
            )
            env.start_service("sockperf-udp", ["sockperf", "sr", "-i", "0.0.0.0", "-p", str(udp)])
        host, _ = env.address_for_peer(tcp, peer.host_address)
        self.targets = {"tcp": (host, tcp), "udp": (host, udp), "data": (host, data)}

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        duration = self.params.seconds if seconds is None else seconds
        if self.tool == "netperf":
            host, port = self.targets["tcp"]
            test = "TCP_RR" if point["protocol"] == "tcp" else "UDP_RR"
            data = self.targets["data"][1]
            argv = [
                "netperf",
                "-H",
                host,
                "-p",
                str(port),
                "-t",
                test,
                "-l",
                f"{duration:g}",
                "-P",
                "0",
                "--",
                "-r",
                "100,200",
                "-P",
                f"{data},{data}",
                "-o",
                "THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,STDDEV_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY",
            ]
            facts = {"tool": "netperf", "request_bytes": 100, "response_bytes": 200}
            output = peer.run(argv, timeout=duration + 60).output
            return RawResult(outputs={self.tool: output}, facts=facts)
        return self._sockperf(peer, point, duration)

    def _sockperf(self, peer: Peer, point: dict[str, Any], duration: float) -> RawResult:
        """sockperf's ping-pong with its full log, reduced to windows on the peer where it was written
        (`kitlib/core/services/rtt_windows.py`) and removed there whatever happened."""
        host, port = self.targets[point["protocol"]]
        log = peer.run(["mktemp", LOG_TEMPLATE], timeout=30).output.strip()
        if not LOG_PATH.fullmatch(log):
            raise KitError(f"the peer's mktemp gave {log[:80]!r}, not a file named after {LOG_TEMPLATE}")
        try:
            argv = [
                "sockperf",
                "pp",
                "-i",
                host,
                "-p",
                str(port),
                "-m",
                str(self.params.msg_bytes),
                "-t",
                str(math.ceil(duration)),  # sockperf takes whole seconds
                "--full-rtt",
                "--full-log",
                log,
            ] + (["--tcp"] if point["protocol"] == "tcp" else [])
            output = peer.run(argv, timeout=duration + 60).output
            windows = peer.run(services.command("rtt_windows", log, WINDOW_S), timeout=60).output
        finally:
            peer.run(["rm", "-f", "--", log], timeout=30, check=False)
        facts = {"tool": "sockperf", "request_bytes": self.params.msg_bytes, "response_bytes": self.params.msg_bytes}
        return RawResult(outputs={"sockperf": output}, facts=facts, series={"rtt-windows": windows})


def workloads(params: NetParams) -> list[Workload]:
    chosen = {"bandwidth": BandwidthWorkload, "rr": RequestResponseWorkload}
    return [chosen[name](params) for name in params.workloads if name in chosen]


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=workloads,
)
