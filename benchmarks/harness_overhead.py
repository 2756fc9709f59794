"""What the harness adds to a measurement: the same command lines of redis-benchmark, sockperf (TCP and UDP
ping-pong) and fio, run by hand (plain subprocess, the same CPU pinning, a peer namespace made the way the
kit makes it) and through `kit run` on `native`, in interleaved pairs; prints, per tool and metric, the
median ratio kit ÷ hand with its spread over the pairs (min–max). Run as root:

    PYTHONPATH=$PWD python benchmarks/harness_overhead.py [--pairs 5] [--tools redis,sockperf,fio]
        [--variants]   also the hand-run variants that isolate causes (redis: empty keyspace, -q output;
                       every tool: the kit without its notebook, `kit run --no-notebook`)

The hand side runs what the kit runs, state included: the Redis server with the kit's options and its
keyspace filled by the kit's fill command, sockperf's servers, fio's test file laid out as the kit does.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kitlib.core import naming, paths
from kitlib.measure import cpus
from kitlib.measure.experiments.block import PERCENTILES
from kitlib.measure.experiments.redis import fill_script
from kitlib.measure.parsers import fio as fio_parser
from kitlib.measure.parsers import redis_benchmark, sockperf
from kitlib.measure.peer import NamespacePeer
from kitlib.specs.block import JOBS

ROOT = Path(__file__).resolve().parent.parent
#: (tool, metric as reported, kind) compared for each tool; kind says which way is better
Metrics = dict[tuple[str, str], float]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def taskset(argv: list[str], cpu_list: list[int]) -> list[str]:
    return ["taskset", "-c", ",".join(map(str, cpu_list)), *argv]


class Hand:
    """The hand-run side: a namespace peer like the kit's, servers started with Popen, clients with run."""

    def __init__(self) -> None:
        layout = cpus.split(1)
        self.sut, self.client = layout.sut_cpus, layout.client_cpus
        self.peer = NamespacePeer(self.client, naming.new_run_label())
        self.servers: list[subprocess.Popen] = []
        self.workdir = Path(tempfile.mkdtemp(prefix="hand-", dir=_scratch()))

    def __enter__(self) -> Hand:
        self.peer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_servers()
        self.peer.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def client_run(self, argv: list[str], timeout: float) -> str:
        argv = ["ip", "netns", "exec", self.peer.namespace, *taskset(argv, self.client)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True)
        return done.stdout + done.stderr

    def serve(self, argv: list[str], port: int | None = None) -> None:
        log = open(self.workdir / f"server-{len(self.servers)}.log", "wb")  # noqa: SIM115 - closed with the server
        proc = subprocess.Popen(
            taskset(argv, self.sut), stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.workdir
        )
        self.servers.append(proc)
        deadline = time.monotonic() + 30
        while port is not None and time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.05)
        if port is not None:
            raise RuntimeError(f"{argv[0]} did not listen on {port}")
        time.sleep(0.3)

    def stop_servers(self) -> None:
        for proc in self.servers:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.servers = []


def _scratch() -> Path:
    root = paths.scratch_root()
    root.mkdir(parents=True, exist_ok=True)
    return root


# -- the three tools by hand -----------------------------------------------------------------------


def redis_by_hand(args: argparse.Namespace, *, fill: bool = True, output: str = "--csv") -> Metrics:
    with Hand() as hand:
        port = free_port()
        data = hand.workdir / "data"
        data.mkdir()
        server = ["redis-server", "--port", str(port), "--bind", "0.0.0.0", "--protected-mode", "no"]
        hand.serve([*server, "--save", "", "--appendonly", "no", "--dir", str(data)], port)
        host = hand.peer.host_address
        if fill:
            hand.client_run(["sh", "-c", fill_script(args.keyspace, 50, host, port)], timeout=600)
        found: Metrics = {}
        for op, extra in (("SET", ["SET", "__rand_int__", "v" * 50]), ("GET", ["GET", "__rand_int__"])):
            argv = ["redis-benchmark", "-h", host, "-p", str(port), "-c", str(args.clients), "-n"]
            argv += [str(args.requests), "-P", str(args.pipeline), "-r", str(args.keyspace), output, *extra]
            text = hand.client_run(argv, timeout=600)
            for m in redis_benchmark.parse(text, "hand"):
                if m.metric in ("throughput", "latency_mean") and m.dims.get("op") == op:
                    found[(f"redis {op}", m.metric)] = m.value
        return found


def sockperf_by_hand(args: argparse.Namespace) -> Metrics:
    found: Metrics = {}
    with Hand() as hand:
        tcp, udp = free_port(), free_port()
        hand.serve(["sockperf", "sr", "--tcp", "-i", "0.0.0.0", "-p", str(tcp)], tcp)
        hand.serve(["sockperf", "sr", "-i", "0.0.0.0", "-p", str(udp)])
        for protocol, port in (("tcp", tcp), ("udp", udp)):
            argv = ["sockperf", "pp", "-i", hand.peer.host_address, "-p", str(port), "-m", "100"]
            argv += ["-t", f"{args.seconds:g}", "--full-rtt"] + (["--tcp"] if protocol == "tcp" else [])
            text = hand.client_run(argv, timeout=args.seconds + 60)
            for m in sockperf.parse(text, "hand"):
                if m.metric in ("transaction_rate", "rtt_mean"):
                    found[(f"sockperf {protocol}", m.metric)] = m.value
    return found


def fio_by_hand(args: argparse.Namespace) -> Metrics:
    rw, bs, _, extra = JOBS[args.fio_job]
    everywhere = cpus.split(None).sut_cpus  # fio's workloads take every CPU (sut_cores None)
    folder = Path(tempfile.mkdtemp(prefix="hand-fio-", dir=_scratch()))
    try:
        path = folder / "fio-test"
        layout = ["fio", "--name=layout", f"--filename={path}", f"--size={args.file_mb}M", "--rw=write", "--bs=1M"]
        layout += ["--ioengine=libaio", "--direct=1", "--iodepth=16"]
        subprocess.run(taskset(layout, everywhere), capture_output=True, check=True, timeout=600)
        argv = ["fio", f"--name={args.fio_job}", f"--filename={path}", f"--size={args.file_mb}M", f"--rw={rw}"]
        argv += [f"--bs={bs}", "--ioengine=libaio", "--direct=1", f"--iodepth={args.iodepth}"]
        argv += [f"--runtime={args.runtime:g}", "--time_based", "--output-format=json"]
        argv += [f"--percentile_list={PERCENTILES}", *extra]
        done = subprocess.run(taskset(argv, everywhere), capture_output=True, text=True, check=True, timeout=600)
        return _fio_metrics(fio_parser.parse(done.stdout, "hand"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fio_metrics(found) -> Metrics:
    return {(f"fio {m.dims.get('direction')}", m.metric): m.value for m in found if m.metric in ("iops", "clat_mean")}


# -- the same through the kit ----------------------------------------------------------------------


def kit_run(experiment: str, params: dict, *, notebook: bool = True) -> list[dict[str, str]]:
    """`kit run EXPERIMENT --env native --repetitions 1 -p …` into a fresh results folder; its records."""
    with tempfile.TemporaryDirectory(prefix="kit-overhead-") as results:
        argv = [sys.executable, "-m", "kitlib.cli", "run", experiment, "--env", "native", "--repetitions", "1"]
        for name, value in params.items():
            argv += ["-p", name, json.dumps(value)]
        if not notebook:
            argv.append("--no-notebook")
        env = {**os.environ, "KIT_RESULTS": results, "KIT_FIGURES": results, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"kit run {experiment} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        (records,) = Path(results, experiment).glob("*/records.csv")
        with records.open() as handle:
            return list(csv.DictReader(handle))


def redis_by_kit(args: argparse.Namespace, notebook: bool = True) -> Metrics:
    params = {"clients": [args.clients], "pipeline": args.pipeline, "requests": args.requests}
    params["keyspace"] = args.keyspace
    rows = kit_run("redis", params, notebook=notebook)
    return {
        (f"redis {r['op']}", r["metric"]): float(r["value"])
        for r in rows
        if r["metric"] in ("throughput", "latency_mean") and r.get("op") in ("SET", "GET")
    }


def sockperf_by_kit(args: argparse.Namespace, notebook: bool = True) -> Metrics:
    rows = kit_run("net", {"workloads": ["rr"], "seconds": args.seconds}, notebook=notebook)
    return {
        (f"sockperf {r['protocol']}", r["metric"]): float(r["value"])
        for r in rows
        if r["metric"] in ("transaction_rate", "rtt_mean")
    }


def fio_by_kit(args: argparse.Namespace, notebook: bool = True) -> Metrics:
    params = {"workloads": [args.fio_job], "file_mb": args.file_mb, "runtime": args.runtime, "iodepth": args.iodepth}
    rows = kit_run("block", params, notebook=notebook)
    return {
        (f"fio {r['direction']}", r["metric"]): float(r["value"])
        for r in rows
        if r["metric"] in ("iops", "clat_mean") and r.get("percentile", "") == ""
    }


# -- pairs and the table ---------------------------------------------------------------------------


def modes_for(tool: str, args: argparse.Namespace) -> dict[str, Callable[[], Metrics]]:
    """The hand run first (the reference), the kit second, then the variants that isolate causes."""
    hand = {"redis": redis_by_hand, "sockperf": sockperf_by_hand, "fio": fio_by_hand}[tool]
    kit = {"redis": redis_by_kit, "sockperf": sockperf_by_kit, "fio": fio_by_kit}[tool]
    modes: dict[str, Callable[[], Metrics]] = {"hand": lambda: hand(args), "kit": lambda: kit(args)}
    if args.variants:
        modes["kit --no-notebook"] = lambda: kit(args, notebook=False)
        if tool == "redis":
            modes["hand, empty keyspace"] = lambda: redis_by_hand(args, fill=False)
            modes["hand, -q output"] = lambda: redis_by_hand(args, output="-q")
    return modes


def measure(tool: str, args: argparse.Namespace) -> dict[str, list[Metrics]]:
    """`pairs` rounds; each runs every mode once, the order rotated from round to round."""
    modes = modes_for(tool, args)
    names = list(modes)
    results: dict[str, list[Metrics]] = {name: [] for name in names}
    for i in range(args.pairs):
        order = names[i % len(names) :] + names[: i % len(names)] if i % 2 == 0 else list(reversed(names))
        for name in order:
            results[name].append(modes[name]())
            print(f"  {tool} round {i + 1}/{args.pairs}: {name} done", file=sys.stderr, flush=True)
    return results


def summarize(tool: str, results: dict[str, list[Metrics]]) -> list[tuple[str, str, str, float, float, float, int]]:
    """(what, metric, mode, median ratio, min, max, pairs) of each mode against the hand run of its round."""
    rows = []
    hand = results["hand"]
    for mode, runs in results.items():
        if mode == "hand":
            continue
        for key in sorted(hand[0]):
            ratios = [run[key] / ref[key] for run, ref in zip(runs, hand, strict=True) if key in run and ref.get(key)]
            if ratios:
                rows.append((key[0], key[1], mode, statistics.median(ratios), min(ratios), max(ratios), len(ratios)))
    return rows


def table(rows, results_by_tool) -> str:
    lines = [
        "| measured | metric | compared | median kit ÷ hand | min–max | pairs | hand median |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for what, metric, mode, median, low, high, n in rows:
        hand_runs = results_by_tool[what.split()[0]]["hand"]
        hand_median = statistics.median(r[(what, metric)] for r in hand_runs if (what, metric) in r)
        lines.append(f"| {what} | {metric} | {mode} | {median:.3f} | {low:.3f}–{high:.3f} | {n} | {hand_median:,.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--tools", default="redis,sockperf,fio")
    parser.add_argument("--variants", action="store_true", help="also the variants that isolate causes")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--pipeline", type=int, default=10)
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--keyspace", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=5.0, help="sockperf seconds per protocol")
    parser.add_argument("--fio-job", default="rand_read", choices=sorted(JOBS))
    parser.add_argument("--file-mb", type=int, default=256)
    parser.add_argument("--runtime", type=float, default=5.0, help="fio seconds")
    parser.add_argument("--iodepth", type=int, default=32)
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        parser.error("the peer namespace needs root")
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    tools = [t for t in args.tools.split(",") if t]
    results_by_tool, rows = {}, []
    for tool in tools:
        results_by_tool[tool] = measure(tool, args)
        rows += summarize(tool, results_by_tool[tool])
    print(table(rows, results_by_tool))
    return 0


if __name__ == "__main__":
    sys.exit(main())
