"""sockperf ping-pong client output (sockperf 3.7).

With `--full-rtt` it reports round trips:   `====> avg-rtt=16.990 (std-dev=21.033)`
without, half of them ("latency"):           `====> avg-latency=8.850 (std-dev=13.191)`
and percentiles `---> percentile 99.000 =   37.796` in the same unit, the last line being
`---> <MIN> observation =   14.831`: an output without it was cut short and is refused.

The kit's metric is the full round trip of one transaction (as netperf reports it), so half-trip
output is doubled and marked `rtt_from="2 x sockperf latency"`; output that says neither raises.
ANSI colour codes sockperf prints are ignored.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers

TOOL = "sockperf"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AVERAGE = re.compile(r"====> avg-(rtt|latency)=(\S+) \(std-dev=([^)\s]+)\)[ \t]*$", re.M)
_PERCENTILE = re.compile(r"---> percentile (\S+) =\s+(\S+)[ \t]*$", re.M)
_VALID = re.compile(r"\[Valid Duration\] RunTime=(\S+) sec; SentMessages=(\S+); ReceivedMessages=(\S+)[ \t]*$", re.M)
_LAST = re.compile(r"---> <MIN> observation =\s+(\S+)[ \t]*$", re.M)


def parse(text: str, source: str) -> list[Measurement]:
    text = lines.finished(_ANSI.sub("", text))
    if not _AVERAGE.search(text):
        raise ParseError(TOOL, source, "no avg-rtt or avg-latency line (the test did not finish)")
    average = lines.one(_AVERAGE, text, TOOL, source, "avg-rtt/avg-latency line")
    last = lines.one(_LAST, text, TOOL, source, "'<MIN> observation' line, the last of the output")
    if last.start() < average.start():
        raise ParseError(TOOL, source, "the '<MIN> observation' line comes before the average")
    mode = average[1]
    mean, stddev = (numbers.number(v, TOOL, source, what) for v, what in ((average[2], "avg"), (average[3], "std-dev")))
    factor, dims = (
        (1.0, {"rtt_from": "sockperf --full-rtt"}) if mode == "rtt" else (2.0, {"rtt_from": "2 x sockperf latency"})
    )
    found = [
        Measurement("rtt_mean", mean * factor, "us", dims),
        Measurement("rtt_stddev", stddev * factor, "us", dims),
    ]
    seen: set[float] = set()
    for percentile, value in _PERCENTILE.findall(text[average.end() : last.start()]):
        pct = numbers.number(percentile, TOOL, source, "percentile")
        if pct in seen:
            raise ParseError(TOOL, source, f"percentile {percentile} appears twice")
        seen.add(pct)
        rtt = numbers.number(value, TOOL, source, f"percentile {percentile}") * factor
        found.append(Measurement("rtt_percentile", rtt, "us", {**dims, "percentile": pct}))
    valid = lines.at_most_one(_VALID, text, TOOL, source, "[Valid Duration] line")
    if valid:
        seconds = numbers.positive(numbers.number(valid[1], TOOL, source, "RunTime"), TOOL, source, "RunTime")
        received = numbers.count(valid[3], TOOL, source, "ReceivedMessages")
        found.append(Measurement("transactions", float(received), "count"))
        found.append(Measurement("duration", seconds, "s"))
        found.append(Measurement("transaction_rate", received / seconds, "trans/s"))
    return found
