"""Scale-out (seed 002, post 4): N Redis instances behind a proxy on the peer, speedup over one.

Redis is single-threaded, so one server cannot use a many-core host; the post partitions the data
over N instances and puts a proxy tier in front (twemproxy with consistent hashing, HAProxy round
robin). Every point measures, back to back, the post's two experiments in the same environment:

* `baseline`: one redis-benchmark loader against instance 0 directly (1 server, 1 client);
* `scale-out`: `loaders` loaders at once against the proxy, which spreads them over all N instances;

and records each one's aggregate throughput (all requests / wall time of the bundle) plus the
`speedup` = scale-out / baseline of that trial, beside the ideal `instances`. Each loader sends
75% GET / 25% SET (by request count, GETs first), 1-byte values by default, pipelining.

The N instances run in the environment under test: N processes on `native`, N containers of a
Docker label (the label's options, CPUs and storage each; behind NAT each publishes its own port),
recorded as `containers` (0 on native); on a remote engine they share one container. Each instance
keeps the whole keyspace (filled once, directly), so a GET hits whichever instance the proxy picks;
AOF with `everysec` as the post.

Placement (a swept point column): `default` leaves the instances to the scheduler over the SUT
CPUs; `pinned` pins instance i (all its threads) to SUT CPU i. Where the host has fewer SUT CPUs
than instances, pinning shares CPUs and the placement claims are not decided. With `irq_pinning`
(root) the peer link's interrupt vectors are pinned to the SUT CPUs and irqbalance stopped until
the environment stops; every record says what was done (`irq_pinning`: "not done", "not
applicable" for a virtual link, or the vectors and CPUs).
"""

from __future__ import annotations

import shlex
from typing import Any

from kitlib.core.ascii_numbers import is_count
from kitlib.core.errors import EnvironmentUnavailable, UnexpectedOutput
from kitlib.core.records import Measurement
from kitlib.measure import irq
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments import instances
from kitlib.measure.experiments.base import Experiment, RawResult
from kitlib.measure.experiments.redis import fill_script, server_argv
from kitlib.measure.host.ports import free_ports
from kitlib.measure.parsers import redis_benchmark, scaleout_load
from kitlib.measure.peer import Peer
from kitlib.specs.scaleout import SPEC, SUPPORTED_KINDS, ScaleoutParams

GET_SHARE = 0.75  # the post's 75% GET / 25% SET


class ScaleoutWorkload(instances.ScaledOutWorkload):
    name = "scaleout"
    tool = "kit-scaleout-load"

    def __init__(self, params: ScaleoutParams):
        super().__init__(params)
        self.irq_state = "not done"
        self.proxy_port = self.stats_port = 0

    def points(self) -> list[dict[str, Any]]:
        return [{"placement": p} for p in self.params.placements]

    def prepare(self, env: Environment, peer: Peer) -> None:
        p = self.params
        if env.kind not in SUPPORTED_KINDS:
            raise EnvironmentUnavailable(
                f"{env.label}: the scale-out runs on native and Docker labels only for now "
                f"(one guest per instance is not built yet); got kind {env.kind!r}"
            )
        self.targets, self.pids = [], []
        ports = env.layout.ports[: p.instances]
        self.homes = instances.homes(env, ports)
        for i, (port, home) in enumerate(zip(ports, self.homes, strict=True)):
            data = f"{home.data_dir.rstrip('/')}/scaleout-{i}"
            home.run(["mkdir", "-p", data], timeout=30)
            home.start_service(f"redis-{i}", server_argv(port, data, aof=True), ready_port=port)
            self.targets.append(home.address_for_peer(port, peer.host_address))
        self.containers = instances.containers(env, self.homes)
        self.irq_state = self._pin_interrupts(env, peer) if p.irq_pinning else "not done"
        for host, port in self.targets:
            cli = ["redis-cli", "-h", host, "-p", str(port)]
            peer.run([*cli, "FLUSHALL"], timeout=60)
            peer.run(["sh", "-c", fill_script(p.keyspace, p.value_size, host, port)], timeout=1800)
            size = peer.run([*cli, "DBSIZE"], timeout=60).output.strip().split()[-1]
            if not is_count(size) or int(size) != p.keyspace:
                raise UnexpectedOutput("peer", [*cli, "DBSIZE"], f"{size!r} keys after the fill, expected {p.keyspace}")
            self.pids.append(server_pid(peer.run([*cli, "INFO", "server"], timeout=60).output, f"{host}:{port}"))
        self.proxy_port, self.stats_port = free_ports(2)

    def _pin_interrupts(self, env: Environment, peer: Peer) -> str:
        """The peer link's interrupts on the SUT CPUs until the environment stops (see `kitlib.measure.irq`)."""
        if getattr(env, "host", None):
            return "not done: the system under test is on another host"
        pinning = env.hold(irq.IrqPinning(irq.interface_with(peer.host_address), env.layout.sut_cpus))
        return pinning.start()

    def place(self, env: Environment, placement: str) -> None:
        """Pin every thread of instance i to SUT CPU i (modulo), or give them all the SUT CPUs back."""
        instances.place(self.homes, self.pids, env.layout.sut_cpus, placement)

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """The baseline's `seconds`, the scale-out sharing its requests at about half its rate, and the
        warm-up and proxy start; `requests`-bound runs have no model."""
        return None if self.params.requests else 3 * self.params.seconds + 2.0

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        assert self.targets, "prepare() first"
        p = self.params
        self.place(env, point["placement"])
        host, port = self.targets[0]
        requests = p.requests or self._sized(peer, host, port)
        # sized from `seconds`, the bundle's loaders share the baseline's requests: its own rate is not
        # known before it runs, and through the proxy on few cores it is below one instance's
        per_loader = p.requests or max(1000, requests // max(1, p.loaders))
        timeout = 300 + 20 * p.seconds * max(1, p.loaders) + max(requests, per_loader * p.loaders) / 500
        baseline = peer.run(["sh", "-c", load_script(1, host, port, requests, p)], timeout=timeout).output
        proxy = proxy_config(p.proxy, self.proxy_port, self.targets)
        script = proxy_script(
            p.proxy,
            proxy,
            self.proxy_port,
            load_script(p.loaders, "127.0.0.1", self.proxy_port, per_loader, p),
            self.stats_port,
        )
        scaled = peer.run(["bash", "-c", script], timeout=timeout).output
        return RawResult(
            outputs={"baseline": baseline, "scale-out": scaled, "proxy-config": proxy},
            facts={"requests_per_loader": requests, "scaleout_requests_per_loader": per_loader},
        )

    def _sized(self, peer: Peer, host: str, port: int) -> int:
        """Requests per loader from an unrecorded GET warm-up against one instance: `seconds` at its rate."""
        p = self.params
        warm_argv = ["redis-benchmark", "-h", host, "-p", str(port), "-c", str(p.clients), "-P", str(p.pipeline)]
        warm_argv += ["-n", str(p.warmup_requests), "-r", str(p.keyspace), "--csv", "GET", "__rand_int__"]
        warm = peer.run(warm_argv, timeout=120 + p.warmup_requests / 2000).output
        rate = next(m.value for m in redis_benchmark.parse(warm, "warm-up", ops=("GET",)) if m.metric == "throughput")
        return max(1000, int(rate * p.seconds))

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        found: list[Measurement] = []
        rates = {}
        for config in ("baseline", "scale-out"):
            for m in scaleout_load.parse(raw.outputs[config], f"{source}.{config}.txt"):
                found.append(Measurement(m.metric, m.value, m.unit, {**m.dims, "config": config}))
                if m.metric == "throughput":
                    rates[config] = m.value
        speedup = rates["scale-out"] / rates["baseline"]
        return [*found, Measurement("speedup", speedup, "x", {"op": "mix", "config": "scale-out"})]

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        p = self.params
        return {
            **point,
            "instances": p.instances,
            "loaders": p.loaders,
            "clients": p.clients,
            "pipeline": p.pipeline,
            "keyspace": p.keyspace,
            "value_size": p.value_size,
            "proxy": p.proxy,
            "get_share": GET_SHARE,
            "irq_pinning": self.irq_state,
            "containers": self.containers,
        }


def server_pid(info: str, where: str) -> str:
    """`process_id` from `INFO server` (the PID as the environment sees it)."""
    for line in info.splitlines():
        if line.startswith("process_id:"):
            return line.split(":", 1)[1].strip()
    raise UnexpectedOutput("peer", f"redis-cli INFO server ({where})", "no process_id line")


def load_script(loaders: int, host: str, port: int, requests: int, p: ScaleoutParams) -> str:
    """Shell: `loaders` loaders at once, each GETs then SETs (75/25 of `requests`), one wall clock. Every
    part is quoted: the host comes from an inventory or an option."""
    gets = max(1, round(requests * GET_SHARE))
    sets = max(1, requests - gets)
    base = ["redis-benchmark", "-h", host, "-p", str(int(port)), "-c", str(p.clients), "-P", str(p.pipeline)]
    base += ["-r", str(p.keyspace), "--csv"]
    get = shlex.join([*base, "-n", str(gets), "GET", "__rand_int__"])
    put = shlex.join([*base, "-n", str(sets), "SET", "__rand_int__", "v" * p.value_size])
    jobs = [f'( {get} > "$d/{i}.get" 2>&1; {put} > "$d/{i}.set" 2>&1 )' for i in range(loaders)]
    reports = [
        f"echo '== loader {i} GET {gets}'; cat \"$d/{i}.get\"; echo '== loader {i} SET {sets}'; cat \"$d/{i}.set\""
        for i in range(loaders)
    ]
    return instances.at_once(jobs, reports)


def proxy_config(proxy: str, port: int, targets: list[tuple[str, int]]) -> str:
    """twemproxy: ketama consistent hashing over the instances; HAProxy: TCP round robin."""
    if proxy == "twemproxy":
        servers = "\n".join(f"   - {host}:{p}:1 s{i}" for i, (host, p) in enumerate(targets))
        return (
            "scaleout:\n"
            f"  listen: 127.0.0.1:{port}\n"
            "  hash: fnv1a_64\n"
            "  distribution: ketama\n"
            "  redis: true\n"
            "  auto_eject_hosts: false\n"
            "  timeout: 60000\n"
            f"  servers:\n{servers}\n"
        )
    servers = "\n".join(f"  server s{i} {host}:{p}" for i, (host, p) in enumerate(targets))
    return (
        "global\n  maxconn 4096\n"
        "defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 120s\n  timeout server 120s\n"
        f"frontend scaleout\n  bind 127.0.0.1:{port}\n  default_backend instances\n"
        f"backend instances\n  balance roundrobin\n{servers}\n"
    )


def proxy_script(proxy: str, config: str, port: int, load: str, stats_port: int) -> str:
    """Bash: start the proxy in the foreground of this script, wait for its port, load, stop it.
    The proxy lives only as long as this one bounded command, so a timeout or signal ends it too."""
    name = "nutcracker.yml" if proxy == "twemproxy" else "haproxy.cfg"
    start = (
        f'nutcracker -c "$c/{name}" -s {int(stats_port)} -a 127.0.0.1 -o "$c/proxy.log"'
        if proxy == "twemproxy"
        else f'haproxy -db -f "$c/{name}" > "$c/proxy.log" 2>&1'
    )
    return "\n".join(
        [
            "set -u",
            "c=$(mktemp -d)",
            f"printf '%s' {shlex.quote(config)} > \"$c/{name}\"",
            f"{start} &",
            "proxy=$!",
            """trap 'kill $proxy 2>/dev/null; wait $proxy 2>/dev/null; rm -rf "$c"' EXIT""",
            "for i in $(seq 100); do",
            f"  (exec 3<>/dev/tcp/127.0.0.1/{int(port)}) 2>/dev/null && break",
            """  kill -0 $proxy 2>/dev/null || { echo 'proxy exited:'; cat "$c/proxy.log"; exit 1; }""",
            "  sleep 0.1",
            "done",
            load,
        ]
    )


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=lambda params: [ScaleoutWorkload(params)],
)
