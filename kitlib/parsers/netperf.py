"""netperf TCP_RR / UDP_RR: omni output selectors (`-P 0 -- -o ...`) or the classic table.

    57607.79,Trans/s,17.31,23.97,16,19,29        (THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,STDDEV_LATENCY,P50,P90,P99)

    Socket Size   Request  Resp.   Elapsed  Trans.
    ...
    212992 212992 100      200     2.00     69148.40

With one transaction in flight the round trip is 1e6 / rate µs when netperf gives no latency
(the classic table); those records carry `derived="1e6/transaction_rate"`.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "netperf"
_OMNI = re.compile(r"^([0-9.]+),Trans/s,([0-9.]+),([0-9.]+),([0-9.]+),([0-9.]+),([0-9.]+)\s*$", re.M)
_CLASSIC = re.compile(r"^\s*\d+\s+\d+\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s*$", re.M)


def parse(text: str, source: str) -> list[Measurement]:
    omni = _OMNI.search(text)
    if omni:
        rate, mean, stddev, p50, p90, p99 = (float(v) for v in omni.groups())
        found = [
            Measurement("transaction_rate", rate, "trans/s"),
            Measurement("rtt_mean", mean, "us"),
            Measurement("rtt_stddev", stddev, "us"),
        ]
        return found + [
            Measurement("rtt_percentile", value, "us", {"percentile": p})
            for p, value in ((50.0, p50), (90.0, p90), (99.0, p99))
        ]
    classic = _CLASSIC.search(text)
    if classic:
        request, response, seconds, rate = classic.groups()
        if float(rate) <= 0:
            raise ParseError(TOOL, source, f"transaction rate {rate} is not positive")
        dims = {"request_bytes": int(request), "response_bytes": int(response)}
        return [
            Measurement("transaction_rate", float(rate), "trans/s", dims),
            Measurement("rtt_mean", 1e6 / float(rate), "us", {**dims, "derived": "1e6/transaction_rate"}),
            Measurement("duration", float(seconds), "s", dims),
        ]
    error = next(
        (line.strip() for line in text.splitlines() if "netperf" in line.lower() and "error" in line.lower()), None
    )
    raise ParseError(TOOL, source, error or "no result line (omni selectors or classic table)")
