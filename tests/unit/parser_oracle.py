"""What the parser property test knows, independently of the parsers: which real output in
tests/data each tool printed, the number tokens a text holds, and how each parser's derived values
are computed from those numbers (checked on the untruncated files).

A new parser is picked up when it is registered and its real outputs sit in `tests/data/<tool>/`.
Its values must then stand in its output as number tokens (in the unit read, up to a power of ten);
a value it computes from several numbers is declared in DERIVATIONS, with how it is computed.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kitlib.core.records import Measurement
from kitlib.measure.parsers.latency_block import CDF_PERCENTILES
from kitlib.measure.parsers.rr import SLOW_US

from ..conftest import DATA

#: data folders not named after the tool that printed their files
FOLDER_TOOLS = {"scaleout": "kit-scaleout-load", "scaleout_oltp": "kit-scaleout-oltp"}
#: files a tool's folder holds from another tool (path under tests/data -> tool)
FILE_TOOLS = {"redis-benchmark/info-stats.txt": "redis-info"}
#: what tests/data holds that no tool printed: the runner's unit files, /proc and /sys files, the kit's records,
#: run folders of older results formats, and the tour's records of a run without root or Docker; and what a
#: tool printed that is read for a point's window, never for records (Locust's per-second history), or that
#: the kit reduces where it was written before anything parses it (sockperf's full log: kit-rtt-windows)
NOT_TOOL_OUTPUT_FOLDERS = {"timing", "proc", "formats", "tour", "locust-history", "sockperf-full-log"}
NOT_TOOL_OUTPUT_FILES = "records-*.csv"
#: real outputs of runs that failed (a refused connection, a proxy that exited), named so: the parser
#: must refuse them; every other real output it must parse
FAILED_RUNS = ("*refused*", "*exited*", "*failed*")


def asked(tool: str, full: list[Measurement] | None) -> dict[str, object]:
    """What the kit's caller passes a parser beside the text, from what it asked the tool to run (known
    here from the full output): redis-benchmark's tests, since a CSV has no closing line and only the
    plan knows a row is missing."""
    if tool == "redis-benchmark" and full:
        return {"ops": tuple(dict.fromkeys(m.dims["op"] for m in full))}
    return {}


def failed_run(path: Path) -> bool:
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in FAILED_RUNS)


def real_outputs(root: Path = DATA) -> dict[str, list[Path]]:
    """tool -> its real outputs under tests/data, by the rules above."""
    found: dict[str, list[Path]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in NOT_TOOL_OUTPUT_FOLDERS):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if fnmatch.fnmatch(path.name, NOT_TOOL_OUTPUT_FILES):
                continue
            tool = FILE_TOOLS.get(path.relative_to(root).as_posix(), FOLDER_TOOLS.get(folder.name, folder.name))
            found.setdefault(tool, []).append(path)
    return found


# -- values that stand in the input -------------------------------------------------------------

_TOKEN = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)
#: unit conversions a parser makes by a power of ten (ms -> µs, Mbps -> Gbps, bytes -> MB, ns -> µs)
SCALES = (1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9)


def _key(value: float) -> str:
    return f"{value:.9g}"


def tokens(text: str) -> set[str]:
    """Every number token of `text`, normalised to 9 significant digits."""
    found = set()
    for token in _TOKEN.findall(text):
        value = float(token)
        if math.isfinite(value):
            found.add(_key(value))
    return found


def factor(tool: str, m: Measurement) -> float:
    """sockperf's half round trips are doubled into round trips (its `rtt_from` dimension says so)."""
    return 2.0 if tool == "sockperf" and m.dims.get("rtt_from") == "2 x sockperf latency" else 1.0


def stands(tool: str, m: Measurement, held: set[str]) -> bool:
    """The record's value is a number token of the text, read in the parser's unit."""
    base = m.value / factor(tool, m)
    return any(_key(base / scale) in held for scale in SCALES)


# -- documented derivations ---------------------------------------------------------------------

Expected = list[tuple[str, dict, float]]  # (metric, dimensions a record must carry, value)


@dataclass(frozen=True)
class Derivation:
    """Which records of a tool are computed rather than read, and their values from the raw text."""

    derived: Callable[[Measurement], bool]
    expected: Callable[[str], Expected]


def _block(text: str, tool: str) -> tuple[np.ndarray, dict[str, float]]:
    lines = text.splitlines()
    samples = lines[lines.index(f"{tool} latencies_us") + 1 : lines.index(f"{tool} end")]
    header = "\n".join(line for line in lines if line.startswith(f"{tool} "))
    return np.array(samples, dtype=float), {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", header)}


def _stats(samples: np.ndarray, percentiles: bool) -> Expected:
    found = [
        ("latency_mean", {}, samples.mean()),
        ("latency_median", {}, np.median(samples)),
        ("latency_p99", {}, np.percentile(samples, 99)),
    ]
    if percentiles:
        found += [("latency_percentile", {"percentile": float(p)}, np.percentile(samples, p)) for p in CDF_PERCENTILES]
    return found


def _rr(text: str) -> Expected:
    samples, header = _block(text, "kit-rr")
    wall = header["wall_seconds"]
    return _stats(samples, True) + [
        ("slow_requests", {}, (samples > SLOW_US).sum()),
        ("requests", {}, len(samples)),
        ("throughput", {}, len(samples) / wall),
        ("server_cpu_utilization", {}, 100 * header["server_cpu_seconds"] / wall),
    ]


def _fileops(text: str) -> Expected:
    samples, _ = _block(text, "kit-fileops")
    return _stats(samples, len(samples) >= 100) + [("operations", {}, len(samples))]


def _hpcc(text: str) -> Expected:
    fields = {k: float(v) for k, v in re.findall(r"^(\w+)=(\S+)$", text, re.M) if re.fullmatch(r"[0-9.e+-]+", v)}
    processes = fields["CommWorldProcs"]
    return [
        ("bandwidth", {"kernel": k, "variant": "System"}, fields[f"StarSTREAM_{k}"] * processes)
        for k in ("Copy", "Scale", "Add", "Triad")
    ] + [("gups", {"variant": "System"}, fields["StarRandomAccess_GUPs"] * processes)]


def _xz(text: str) -> Expected:
    size = float(re.search(r"^kit-input-bytes (\d+)$", text, re.M)[1])
    seconds = float(re.search(r"^kit-elapsed-seconds ([0-9.]+)$", text, re.M)[1])
    return [("throughput", {}, size / seconds / 1e6)]


def _sockperf(text: str) -> Expected:
    valid = re.search(r"RunTime=([0-9.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", text)
    return [("transaction_rate", {}, float(valid[2]) / float(valid[1]))]


def _netperf(text: str) -> Expected:
    row = re.search(r"^\d+\s+\d+\s+\d+\s+\d+\s+[0-9.]+\s+([0-9.]+)\s*$", text, re.M)
    return [("rtt_mean", {"derived": "1e6/transaction_rate"}, 1e6 / float(row[1]))] if row else []


def _elapsed(text: str) -> float:
    return float(re.search(r"^== elapsed ([0-9.]+)$", text, re.M)[1])


def _scaleout_load(text: str) -> Expected:
    sections = re.findall(r'^== loader (\d+) [A-Z]+ (\d+)\n(?:.*\n)*?"[A-Z][^"]*","[0-9.]+","([0-9.]+)"', text, re.M)
    requests = sum(int(n) for _, n, _ in sections)
    latency = sum(float(avg) * 1000 * int(n) for _, n, avg in sections) / requests
    mix = {"op": "mix"}
    return [
        ("throughput", mix, requests / _elapsed(text)),
        ("latency_mean", mix, latency),
        ("loaders", mix, len({loader for loader, _, _ in sections})),
    ]


def _scaleout_oltp(text: str) -> Expected:
    rate = {
        name: [float(v) for v in re.findall(rf"^\s*{name}:\s+\d+\s+\(([0-9.]+) per sec\.\)$", text, re.M)]
        for name in ("transactions", "queries")
    }
    times = [float(v) for v in re.findall(r"^\s*total time:\s+([0-9.]+)s$", text, re.M)]
    counts = {
        metric: sum(int(v) for v in re.findall(rf"^\s*{name}:\s+(\d+)", text, re.M))
        for name, metric in (("ignored errors", "errors"), ("reconnects", "reconnects"))
    }
    every = {"instance": "all"}
    elapsed = _elapsed(text)
    return [
        ("tps", every, sum(r * t for r, t in zip(rate["transactions"], times, strict=True)) / elapsed),
        ("qps", every, sum(r * t for r, t in zip(rate["queries"], times, strict=True)) / elapsed),
        ("clients", every, len(times)),
        *((metric, every, value) for metric, value in counts.items()),
    ]


def _kit_linpack(text: str) -> Expected:
    rates = [float(v) for v in re.findall(r"^trial \d+ seconds \S+ gflops (\S+) ", text, re.M)]
    counted = rates[1:] or rates
    return [("gflops", {}, sum(counted) / len(counted)), ("trials_counted", {}, len(counted))]


def _every(_: Measurement) -> bool:
    return True


DERIVATIONS: dict[str, Derivation] = {
    "kit-rr": Derivation(_every, _rr),
    "kit-linpack": Derivation(_every, _kit_linpack),
    "kit-fileops": Derivation(_every, _fileops),
    "hpcc": Derivation(lambda m: m.dims.get("variant") == "System", _hpcc),
    "xz": Derivation(lambda m: m.metric == "throughput", _xz),
    "sockperf": Derivation(lambda m: m.metric == "transaction_rate", _sockperf),
    "netperf": Derivation(lambda m: "derived" in m.dims, _netperf),
    "kit-scaleout-load": Derivation(lambda m: m.metric != "duration", _scaleout_load),
    "kit-scaleout-oltp": Derivation(
        lambda m: m.dims.get("instance") == "all" and m.metric != "duration", _scaleout_oltp
    ),
}


def derived(tool: str, m: Measurement) -> bool:
    spec = DERIVATIONS.get(tool)
    return spec is not None and spec.derived(m)
