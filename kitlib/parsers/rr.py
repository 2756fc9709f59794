"""The kit's request-response client (kitlib/services/rr.py): every request's round trip in µs.

    kit-rr requests=2000 request_bytes=100 response_bytes=200 work=0
    kit-rr wall_seconds=0.198465 server_cpu_seconds=0.078701
    kit-rr latencies_us
    109.53
    …
    kit-rr end

Gives mean, median, p99, the number of requests slower than 1 ms (the study's count of requests
that waited for the next CPU period), percentiles for a CDF, and the server's CPU utilization.
"""

from __future__ import annotations

import re

import numpy as np

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "kit-rr"
SLOW_US = 1000.0
CDF_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.9)
_FIELDS = re.compile(r"(\w+)=([0-9.]+)")


def parse(text: str, source: str) -> list[Measurement]:
    lines = text.splitlines()
    try:
        start, end = lines.index("kit-rr latencies_us"), lines.index("kit-rr end")
    except ValueError:
        raise ParseError(TOOL, source, "no latency block (truncated output, or not kit-rr output)") from None
    fields = {k: float(v) for line in lines[:start] if line.startswith("kit-rr ") for k, v in _FIELDS.findall(line)}
    for needed in ("requests", "wall_seconds", "server_cpu_seconds"):
        if needed not in fields:
            raise ParseError(TOOL, source, f"header lacks {needed}")
    try:
        samples = np.array([float(v) for v in lines[start + 1 : end]])
    except ValueError as exc:
        raise ParseError(TOOL, source, f"a latency is not a number: {exc}") from None
    if len(samples) == 0 or len(samples) != int(fields["requests"]):
        raise ParseError(TOOL, source, f"{len(samples)} latencies for {int(fields['requests'])} requests")
    found = [
        Measurement("latency_mean", float(samples.mean()), "us"),
        Measurement("latency_median", float(np.median(samples)), "us"),
        Measurement("latency_p99", float(np.percentile(samples, 99)), "us"),
        Measurement("slow_requests", float((samples > SLOW_US).sum()), "count"),
        Measurement("requests", float(len(samples)), "count"),
        Measurement("throughput", len(samples) / fields["wall_seconds"], "req/s"),
        Measurement("server_cpu_utilization", 100.0 * fields["server_cpu_seconds"] / fields["wall_seconds"], "%"),
    ]
    found += [
        Measurement("latency_percentile", float(np.percentile(samples, p)), "us", {"percentile": float(p)})
        for p in CDF_PERCENTILES
    ]
    return found
