"""sockperf ping-pong client output (sockperf 3.7).

With `--full-rtt` it reports round trips:   `====> avg-rtt=16.990 (std-dev=21.033)`
without, half of them ("latency"):           `====> avg-latency=8.850 (std-dev=13.191)`
and percentiles `---> percentile 99.000 =   37.796` in the same unit.

The kit's metric is the full round trip of one transaction (as netperf reports it), so half-trip
output is doubled and marked `rtt_from="2 x sockperf latency"`; output that says neither raises.
ANSI colour codes sockperf prints are ignored.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "sockperf"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AVERAGE = re.compile(r"====> avg-(rtt|latency)=([0-9.]+) \(std-dev=([0-9.]+)\)")
_PERCENTILE = re.compile(r"---> percentile ([0-9.]+) =\s+([0-9.]+)")
_VALID = re.compile(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)")


def parse(text: str, source: str) -> list[Measurement]:
    text = _ANSI.sub("", text)
    average = _AVERAGE.search(text)
    if not average:
        raise ParseError(TOOL, source, "no avg-rtt or avg-latency line (the test did not finish)")
    mode, mean, stddev = average.group(1), float(average.group(2)), float(average.group(3))
    factor, dims = (
        (1.0, {"rtt_from": "sockperf --full-rtt"}) if mode == "rtt" else (2.0, {"rtt_from": "2 x sockperf latency"})
    )
    found = [
        Measurement("rtt_mean", mean * factor, "us", dims),
        Measurement("rtt_stddev", stddev * factor, "us", dims),
    ]
    for percentile, value in _PERCENTILE.findall(text):
        found.append(
            Measurement("rtt_percentile", float(value) * factor, "us", {**dims, "percentile": float(percentile)})
        )
    valid = _VALID.search(text)
    if valid:
        found.append(Measurement("transactions", float(valid.group(3)), "count"))
        found.append(Measurement("duration", float(valid.group(1)), "s"))
        found.append(Measurement("transaction_rate", float(valid.group(3)) / float(valid.group(1)), "trans/s"))
    return found
