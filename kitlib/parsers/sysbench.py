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
that could not connect (`FATAL: unable to connect …`) raises with sysbench's words.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "sysbench"
_RATE = re.compile(r"^\s*(transactions|queries):\s+\d+\s+\(([0-9.]+) per sec\.\)", re.M)
_COUNT = re.compile(r"^\s*(ignored errors|reconnects):\s+(\d+)", re.M)
_TIME = re.compile(r"^\s*total time:\s+([0-9.]+)s", re.M)
_LATENCY = re.compile(r"^\s*(avg|min|max|(\d+)th percentile):\s+([0-9.]+)", re.M)


def parse(text: str, source: str) -> list[Measurement]:
    fatal = next((line.strip() for line in text.splitlines() if line.startswith("FATAL")), None)
    rates = dict((name, float(value)) for name, value in _RATE.findall(text))
    if "transactions" not in rates:
        raise ParseError(TOOL, source, f"the run failed: {fatal}" if fatal else "no transactions line (truncated?)")
    latency_block = text[text.find("Latency (ms):") :]
    latencies = {(key if not pct else f"p{pct}"): float(value) for key, pct, value in _LATENCY.findall(latency_block)}
    if "avg" not in latencies:
        raise ParseError(TOOL, source, "no latency section")
    counts = dict((name, float(value)) for name, value in _COUNT.findall(text))
    elapsed = _TIME.search(text)
    found = [
        Measurement("tps", rates["transactions"], "transactions/s"),
        Measurement("latency_mean", latencies["avg"], "ms"),
    ]
    if "queries" in rates:
        found.append(Measurement("qps", rates["queries"], "queries/s"))
    for name, metric in (("ignored errors", "errors"), ("reconnects", "reconnects")):
        if name in counts:
            found.append(Measurement(metric, counts[name], "count"))
    for key, value in latencies.items():
        if key.startswith("p"):
            found.append(Measurement(f"latency_{key}", value, "ms"))
    if elapsed:
        found.append(Measurement("duration", float(elapsed.group(1)), "s"))
    return found
