"""sysbench 0.4.12 `--test=oltp` output, several runs (one per thread count) concatenated in one file.

    sysbench 0.4.12:  multi-threaded system evaluation benchmark
    Number of threads: 10
    Doing read-only test
        transactions:                        204320 (3405.19 per sec.)
        total time:                          60.0026s
        per-request statistics:
             avg:                                  2.93ms
             approx.  95 percentile:               3.34ms

A run without its transactions, average or 95th-percentile line is cut off and raises.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers

TOOL = "sysbench 0.4.12"
_START = numbers.pattern(r"^sysbench 0\.4\.12:", re.M)
_THREADS = numbers.pattern(r"^Number of threads: (\d+)", re.M)
_MODE = numbers.pattern(r"^Doing (read-only|read-write) test", re.M)
_TX = numbers.pattern(r"^\s+transactions:\s+(\d+)\s+\(([0-9.]+) per sec\.\)", re.M)
_DEADLOCKS = numbers.pattern(r"^\s+deadlocks:\s+(\d+)", re.M)
_TIME = numbers.pattern(r"^\s+total time:\s+([0-9.]+)s", re.M)
_AVG = numbers.pattern(r"^\s+avg:\s+([0-9.]+)ms", re.M)
_P95 = numbers.pattern(r"^\s+approx\.\s+95 percentile:\s+([0-9.]+)ms", re.M)


def runs(text: str) -> list[str]:
    starts = [m.start() for m in _START.finditer(text)]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def parse_run(run: str, source: str) -> list[Measurement]:
    threads, tx, avg, p95, elapsed = (p.search(run) for p in (_THREADS, _TX, _AVG, _P95, _TIME))
    if threads is None or tx is None or avg is None or p95 is None or elapsed is None:
        raise ParseError(TOOL, source, "a run lacks its threads, transactions, total time or latency lines (cut off)")
    mode = _MODE.search(run)
    dims: dict[str, object] = {"threads": int(threads.group(1))}
    if mode:
        dims["mode"] = mode.group(1)
    found = [
        Measurement("tps", float(tx.group(2)), "transactions/s", dims),
        Measurement("transactions", float(tx.group(1)), "count", dims),
        Measurement("latency_mean", float(avg.group(1)), "ms", dims),
        Measurement("latency_p95", float(p95.group(1)), "ms", dims),
        Measurement("duration", float(elapsed.group(1)), "s", dims),
    ]
    if deadlocks := _DEADLOCKS.search(run):
        found.append(Measurement("deadlocks", float(deadlocks.group(1)), "count", dims))
    return found


def parse(text: str, source: str) -> list[Measurement]:
    found = runs(text)
    if not found:
        raise ParseError(TOOL, source, "no 'sysbench 0.4.12:' run")
    return [m for run in found for m in parse_run(run, source)]
