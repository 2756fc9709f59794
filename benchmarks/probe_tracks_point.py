"""Which capacity probe follows a client-server point on this host (prints the figures).

A busy host can slow the wake-ups between a guest's CPUs (each one an inter-processor interrupt
through the hypervisor) while arithmetic runs as fast as before: a Linpack probe then reads a normal
machine around a Redis point that lost a third of its rate. This script takes, in turn, a Linpack
probe, a wake-up probe (`kit-pingpong` between the two CPUs), a short Redis point on the loopback
(server pinned to the first CPU, redis-benchmark to the last, as a run places them) and the two probes
again, `rounds` times, and prints how closely each probe's lower reading follows the point's rate
(Spearman's rank correlation) and how widely each spreads. Nothing but loopback traffic; the server
is stopped however the script ends. Run:
    PYTHONPATH=$PWD python benchmarks/probe_tracks_point.py [rounds] [requests] [connections]
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import statistics
import subprocess
import sys
import time

import scipy.stats

from kitlib.core import procs
from kitlib.measure import capacity, cpus
from kitlib.measure.parsers import redis_benchmark

KINDS = (capacity.CPU, capacity.WAKEUP)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(cpu: int, port: int):
    """A redis-server on `port` of the loopback, pinned to `cpu`, without persistence; stopped on exit."""
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    server = subprocess.Popen(
        procs.pinned(argv, [cpu]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        ping = ["redis-cli", "-p", str(port), "PING"]
        while subprocess.run(ping, capture_output=True, text=True, timeout=10).stdout.strip() != "PONG":
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("redis-server did not answer within 10 s")
            time.sleep(0.1)
        yield
    finally:
        procs.kill_group(server)
        server.wait()


def point(cpu: int, port: int, requests: int, clients: int) -> float:
    """One GET point: requests per second as redis-benchmark reports them."""
    argv = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-P", "10", "-n", str(requests)]
    argv += ["-r", "2000", "-t", "get", "--csv"]
    done = subprocess.run(procs.pinned(argv, [cpu]), capture_output=True, text=True, timeout=120, check=True)
    return next(m.value for m in redis_benchmark.parse(done.stdout, "point") if m.metric == "throughput")


def main(rounds: int, requests: int, clients: int) -> None:
    if not (shutil.which("redis-server") and shutil.which("redis-benchmark") and shutil.which("taskset")):
        sys.exit("needs redis-server, redis-benchmark and taskset")
    mine = cpus.available_cpus()
    if any(capacity.host_program(capacity.PROGRAMS[k]) is None for k in KINDS):
        sys.exit("the probes cannot be built here (no C compiler or OpenBLAS)")
    pair = [mine[0], mine[-1]]
    rates: list[float] = []
    lows: dict[str, list[float]] = {k: [] for k in KINDS}
    port = free_port()
    started = time.monotonic()
    with redis_server(pair[0], port):
        for _ in range(rounds):
            before = {k: capacity.run_probe(k, pair) for k in KINDS}
            rates.append(point(pair[-1], port, requests, clients))
            after = {k: capacity.run_probe(k, pair) for k in KINDS}
            for k in KINDS:
                if before[k] is None or after[k] is None:
                    sys.exit(f"the {k} probe failed")
                lows[k].append(min(before[k], after[k]))
    took = time.monotonic() - started
    print(
        f"{rounds} Redis GET points ({requests} requests, {clients} connections, pipeline 10) "
        f"on CPUs {pair}, {took:.0f} s"
    )
    spread = 100 * statistics.stdev(rates) / statistics.fmean(rates)
    print(f"point rate: median {statistics.median(rates):.4g}/s, coefficient of variation {spread:.1f}%")
    for k in KINDS:
        rho, p = scipy.stats.spearmanr(lows[k], rates)
        cv = 100 * statistics.stdev(lows[k]) / statistics.fmean(lows[k])
        print(f"{k:>7} probe: CV {cv:.1f}%, Spearman rho against the point's rate {rho:+.2f} (p = {p:.2g})")


if __name__ == "__main__":
    try:
        given = [int(a) for a in sys.argv[1:4]]
    except ValueError:
        sys.exit(__doc__.rsplit("Run:", 1)[1])
    rounds, requests, clients = [*given, *(40, 200_000, 8)[len(given) :]]
    if rounds < 3 or requests < 1000 or not 1 <= clients <= 1000:
        sys.exit("rounds ≥ 3 (a rank correlation needs them), requests ≥ 1000, 1 ≤ connections ≤ 1000")
    main(rounds, requests, clients)
