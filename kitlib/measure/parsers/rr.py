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

from kitlib.core.records import Measurement
from kitlib.measure.parsers import latency_block, numbers, ranges

TOOL = "kit-rr"
SLOW_US = 1000.0


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    fields, samples = latency_block.read(text, TOOL, source, "requests", "wall_seconds", "server_cpu_seconds")
    numbers.positive(fields["wall_seconds"], TOOL, source, "wall_seconds")
    return latency_block.summary(samples) + [
        Measurement("slow_requests", float((samples > SLOW_US).sum()), "count"),
        Measurement("requests", float(len(samples)), "count"),
        Measurement("throughput", len(samples) / fields["wall_seconds"], "req/s"),
        Measurement("server_cpu_utilization", 100.0 * fields["server_cpu_seconds"] / fields["wall_seconds"], "%"),
    ]
