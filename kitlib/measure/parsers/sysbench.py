"""sysbench 1.0 OLTP run output (`oltp_read_write … run`).

    transactions:                        1900   (632.60 per sec.)
    queries:                             38000  (12652.02 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)
    total time:                          3.0028s
    Latency (ms):
             avg:                                    3.16
             95th percentile:                        4.49

Errors and reconnects become records of their own, so a run with errors stays visible. A run
that could not connect (`FATAL: unable to connect …`) raises with sysbench's words. Every line read
must appear once (two runs in one output are refused, a bundle of them too) and the output must
reach its last line, `execution time (avg/stddev):` under `Threads fairness:`.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "sysbench"
_RATES = {
    name: numbers.pattern(rf"^\s*{name}:\s+(\S+)\s+\((\S+) per sec\.\)[ \t]*$", re.M)
    for name in ("transactions", "queries", "ignored errors", "reconnects")
}
_TIME = numbers.pattern(r"^\s*total time:\s+(\S+?)s[ \t]*$", re.M)
_LATENCY_HEAD = numbers.pattern(r"^Latency \(ms\):[ \t]*$", re.M)
_LATENCY = numbers.pattern(r"^\s*(min|avg|max|sum|(\d+)th percentile):\s+(\S+)[ \t]*$", re.M)
_LAST = numbers.pattern(r"^\s*execution time \(avg/stddev\):\s+\S+[ \t]*$", re.M)


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    text = lines.finished(text)
    fatal = next((line.strip() for line in text.splitlines() if line.startswith("FATAL")), None)
    if fatal and not _RATES["transactions"].search(text):
        raise ParseError(TOOL, source, f"the run failed: {fatal}")
    rates = {name: lines.one(pattern, text, TOOL, source, f"'{name}:' line") for name, pattern in _RATES.items()}
    elapsed = lines.one(_TIME, text, TOOL, source, "'total time:' line")
    head = lines.one(_LATENCY_HEAD, text, TOOL, source, "'Latency (ms):' section")
    last = lines.one(_LAST, text, TOOL, source, "'execution time (avg/stddev):' line, the last of the output")
    latencies: dict[str, float] = {}
    for key, pct, value in _LATENCY.findall(text[head.end() : last.start()]):
        name = f"p{pct}" if pct else key
        if name in latencies:
            raise ParseError(TOOL, source, f"latency {key} appears twice")
        latencies[name] = numbers.number(value, TOOL, source, f"latency {key}")
    missing = [key for key in ("min", "avg", "max") if key not in latencies]
    if missing:
        raise ParseError(TOOL, source, f"the latency section lacks {missing}")
    tps, qps = (
        numbers.number(rates[name][2], TOOL, source, f"{name} per sec.") for name in ("transactions", "queries")
    )
    found = [
        Measurement("tps", tps, "transactions/s"),
        Measurement("latency_mean", latencies["avg"], "ms"),
        Measurement("qps", qps, "queries/s"),
    ]
    for name, metric in (("ignored errors", "errors"), ("reconnects", "reconnects")):
        found.append(Measurement(metric, float(numbers.count(rates[name][1], TOOL, source, name)), "count"))
    for key, value in latencies.items():
        if key.startswith("p"):
            found.append(Measurement(f"latency_{key}", value, "ms"))
    seconds = numbers.number(elapsed[1], TOOL, source, "total time")
    found.append(Measurement("duration", numbers.positive(seconds, TOOL, source, "total time"), "s"))
    return found


_EVERY = numbers.pattern(r"^Report intermediate results every (\d+) second\(s\)[ \t]*$", re.M)
_INTERVAL = numbers.pattern(r"^\[ (\d+)s \] thds: \d+ tps: (\S+) qps: .*$", re.M)


def intervals(text: str, source: str) -> tuple[list[float], float]:
    """The transactions per second of each `--report-interval` line (`[ 3s ] thds: 4 tps: 1560.88 …`)
    and the interval in seconds. The lines must follow each other without a gap; an output without
    them (`--report-interval=0`) raises, since no steadiness can be read from it."""
    text = lines.finished(text)
    every = lines.one(_EVERY, text, TOOL, source, "'Report intermediate results every' line")
    step = float(numbers.count(every[1], TOOL, source, "report interval"))
    found = _INTERVAL.findall(text)
    if not found:
        raise ParseError(TOOL, source, "no intermediate report lines")
    values = []
    for index, (second, tps) in enumerate(found, start=1):
        if numbers.count(second, TOOL, source, "report time") != round(index * step):
            raise ParseError(TOOL, source, f"report line {index} is at {second}s, expected {index * step:g}s")
        values.append(numbers.number(tps, TOOL, source, f"tps at {second}s"))
    return values, numbers.positive(step, TOOL, source, "report interval")
