"""Redis: the paper's key-value workload (Section H), server pinned to one core, client on the peer.

50% GET / 50% SET as two equal phases per point (SET, then GET of the same key space), each with
all client connections pipelining `pipeline` requests. The whole keyspace is filled once when the
server starts (every key redis-benchmark's `__rand_int__` can draw: 12 zero-padded digits; the
paper's were 10), so GETs hit; each GET phase records its hit rate from INFO keyspace_hits/misses.
Values are `value_size` bytes. Each phase is sized by duration: a short GET warm-up (not recorded)
estimates the rate, and each phase then runs `seconds` worth of requests; the requests and the
measured duration of each phase are recorded. The `mix` rows combine both phases: throughput = all
requests / total time, mean latency = mean over all requests.

redis-benchmark runs without `--csv`: its report holds the same summary, and only then does it print
its rate every quarter second. Those ticks are each phase's sub-intervals, so the steady-state rule
(`kitlib.core.steady`) judges each phase on its own (a SET phase through slirp4netns whose rate
collapsed after the warm-up reads as unsteady, not as a quiet point that ran long) and lets a point
grow where its profile allows.
"""

from __future__ import annotations

import shlex
from typing import Any

from kitlib.core.ascii_numbers import is_count
from kitlib.core.errors import UnexpectedOutput
from kitlib.core.records import Measurement
from kitlib.measure import capacity
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Experiment, Intervals, RawResult, Workload
from kitlib.measure.parsers import redis_benchmark, redis_info
from kitlib.measure.peer import Peer
from kitlib.specs.redis import SPEC, RedisParams

KEY_LENGTH = 12  # redis-benchmark's __rand_int__ placeholder is 12 digits


def server_argv(port: int, data_dir: str, aof: bool = False) -> list[str]:
    """One Redis server reachable from the peer, without RDB snapshots: the paper's had no persistence
    (`aof` False); the scale-out post's appends every write and flushes the file once a second."""
    persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if aof else ["--appendonly", "no"]
    return [
        "redis-server",
        *("--port", str(port), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", ""),
        *persistence,
        *("--dir", data_dir),
    ]


#: requests in flight (connections × pipeline) below which a Redis point rests on wake-ups between CPUs
WAKEUP_BOUND_BELOW = 100


class RedisWorkload(Workload):
    name = "redis"
    tool = "redis-benchmark"
    ports_needed = 1
    #: with many requests in flight server and client spend the point on CPU time; with few, each request
    #: waits for the other side to be woken on its CPU (`probe_kind`)
    capacity_probe = capacity.CPU

    def probe_kind(self, point: dict[str, Any]) -> str | None:
        """The wake-up probe below WAKEUP_BOUND_BELOW requests in flight, Linpack from there: around
        Redis GET points on a 2-vCPU cloud guest (`benchmarks/probe_tracks_point.py`) the wake-up
        probe's readings followed the points' rates with Spearman's ρ 0.76 at 10 requests in flight
        (Linpack's 0.28) and 0.77 and 0.40 at 80 (Linpack's 0.64 and 0.30), and not at 480 (0.04,
        Linpack's 0.32)."""
        outstanding = point["clients"] * point.get("pipeline", self.params.pipeline)
        return capacity.WAKEUP if outstanding < WAKEUP_BOUND_BELOW else capacity.CPU

    @property
    def time_bound(self) -> bool:  # type: ignore[override]
        return not self.params.requests

    @property
    def duration_parameter(self) -> str | None:  # type: ignore[override]
        """Points sized by `seconds` are sized for steady state; fixed `requests` are not."""
        return None if self.params.requests else "seconds"

    def estimate_seconds(self, point: dict[str, Any], rates: Any) -> float | None:
        """The SET and the GET phase, plus the unrecorded warm-up; `requests`-bound runs have no model."""
        return None if self.params.requests else 2 * self.params.seconds + 1.0

    def __init__(self, params: RedisParams):
        super().__init__(params)
        self.sut_cores = params.server_cores
        self.target: tuple[str, int] | None = None

    def points(self) -> list[dict[str, Any]]:
        return [{"clients": c, "pipeline": self.params.pipeline} for c in self.params.clients]

    def prepare(self, env: Environment, peer: Peer) -> None:
        port = env.layout.ports[0]
        env.start_service("redis", server_argv(port, env.data_dir), ready_port=port)
        self.target = env.address_for_peer(port, peer.host_address)
        host, mapped = self.target
        cli = ["redis-cli", "-h", host, "-p", str(mapped)]
        peer.run([*cli, "PING"], timeout=30)
        peer.run([*cli, "FLUSHALL"], timeout=60)
        peer.run(["sh", "-c", fill_script(self.params.keyspace, self.params.value_size, host, mapped)], timeout=1800)
        size = peer.run([*cli, "DBSIZE"], timeout=60).output.strip().split()[-1]
        if not is_count(size) or int(size) != self.params.keyspace:
            raise UnexpectedOutput(
                "peer", [*cli, "DBSIZE"], f"{size!r} keys after the fill, expected {self.params.keyspace}"
            )

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any], seconds: float | None = None) -> RawResult:
        assert self.target is not None, "prepare() first"
        host, port = self.target
        p = self.params

        def benchmark(requests: int, *command: str) -> str:
            argv = ["redis-benchmark", "-h", host, "-p", str(port), "-c", str(point["clients"])]
            argv += ["-n", str(requests), "-P", str(p.pipeline), "-r", str(p.keyspace), *command]
            return peer.run(argv, timeout=120 + requests / 2000).output

        requests = p.requests
        if requests is None:  # warm-up, not recorded: its rate sizes the phases
            warm = benchmark(p.warmup_requests, "GET", "__rand_int__")
            rate = next(
                m.value for m in redis_benchmark.parse(warm, "warm-up", ops=("GET",)) if m.metric == "throughput"
            )
            requests = max(1000, int(rate * (seconds or p.seconds)))
        info = ["redis-cli", "-h", host, "-p", str(port), "INFO", "stats"]
        set_out = benchmark(requests, "SET", "__rand_int__", "v" * p.value_size)
        before = peer.run(info, timeout=60).output
        get_out = benchmark(requests, "GET", "__rand_int__")
        after = peer.run(info, timeout=60).output
        return RawResult(
            outputs={"set": set_out, "get": get_out, "info-before-get": before, "info-after-get": after},
            facts={"measured_requests": requests},
        )

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        found: list[Measurement] = []
        for phase in ("set", "get"):
            found += redis_benchmark.parse(raw.outputs[phase], f"{source}.{phase}.txt", ops=(phase,))
        requests = raw.facts.get("measured_requests") or self.params.requests
        durations = [
            Measurement("duration", requests / m.value, "s", dict(m.dims))
            for m in found
            if m.metric == "throughput" and requests
        ]
        hit = redis_info.hit_rate(raw.outputs["info-before-get"], raw.outputs["info-after-get"], f"{source}.info")
        return found + mix_of_phases(found) + durations + [hit]

    def intervals(self, raw: RawResult, source: str) -> dict[str, Intervals]:
        """Each phase's rate per progress tick, by op: a phase is steady on its own."""
        ticks: dict[str, Intervals] = {}
        for phase in ("set", "get"):
            found = redis_benchmark.progress(raw.outputs[phase], f"{source}.{phase}.txt")
            ticks[phase.upper()] = (found.get(phase.upper(), []), redis_benchmark.TICK_SECONDS)
        return ticks

    def record_params(self, point: dict[str, Any]) -> dict[str, Any]:
        p = self.params
        return {
            **point,
            "outstanding": point["clients"] * p.pipeline,
            "keyspace": p.keyspace,
            "value_size": p.value_size,
            "key_length": KEY_LENGTH,
        }


def fill_script(keyspace: int, value_size: int, host: str, port: int) -> str:
    """Shell: SET every key `__rand_int__` can draw (0 … keyspace-1, 12 digits) in one pipelined stream.
    Every part is quoted: the host comes from an inventory or an option."""
    value = "v" * value_size
    resp = r"*3\r\n$3\r\nSET\r\n$12\r\n%s\r\n$%d\r\n%s\r\n"
    awk = (
        f'BEGIN {{ for (i = 0; i < {int(keyspace)}; i++) printf "{resp}", sprintf("%012d", i), {int(value_size)}, '
        f'"{value}" }}'
    )
    cli = shlex.join(["redis-cli", "-h", host, "-p", str(int(port)), "--pipe"])
    return f"awk {shlex.quote(awk)} | {cli}"


def mix_of_phases(found: list[Measurement]) -> list[Measurement]:
    """Combine equal-sized SET and GET phases into the 50/50 mix the paper reports; a phase without a
    mean latency (its requests clamped at redis-benchmark's 3-s ceiling) leaves the mix's missing too."""
    by_op = {(m.metric, m.dims.get("op")): m.value for m in found}
    rates = [by_op.get(("throughput", op)) for op in ("SET", "GET")]
    means = [by_op.get(("latency_mean", op)) for op in ("SET", "GET")]
    if None in rates:
        return []
    mix = [Measurement("throughput", 2.0 / (1.0 / rates[0] + 1.0 / rates[1]), "req/s", {"op": "mix"})]
    if None not in means:
        mix.append(Measurement("latency_mean", (means[0] + means[1]) / 2.0, "us", {"op": "mix"}))
    return mix


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=lambda params: [RedisWorkload(params)],
)
