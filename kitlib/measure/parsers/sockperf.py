"""sockperf ping-pong client output (sockperf 3.7).

With `--full-rtt` it reports round trips:   `====> avg-rtt=16.990 (std-dev=21.033)`
without, half of them ("latency"):           `====> avg-latency=8.850 (std-dev=13.191)`
and percentiles `---> percentile 99.000 =   37.796` in the same unit, the last line being
`---> <MIN> observation =   14.831`: an output without it was cut short and is refused. Every
percentile sockperf prints (PERCENTILES) and its `[Valid Duration]` line must be there and read whole:
a line that lost its number is refused, not skipped.

The kit's metric is the full round trip of one transaction (as netperf reports it), so half-trip
output is doubled and marked `rtt_from="2 x sockperf latency"`; output that says neither raises.
ANSI colour codes sockperf prints are ignored.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "sockperf"
_ANSI = numbers.pattern(r"\x1b\[[0-9;]*m")
_AVERAGE = numbers.pattern(r"====> avg-(rtt|latency)=(\S+) \(std-dev=([^)\s]+)\)[ \t]*$", re.M)
_PERCENTILE_LINE = numbers.pattern(r"---> percentile\b[^\n]*$", re.M)
_PERCENTILE = numbers.pattern(r"---> percentile (\S+) =\s+(\S+)[ \t]*")
_VALID_LINE = numbers.pattern(r"\[Valid Duration\][^\n]*$", re.M)
_VALID = numbers.pattern(r"\[Valid Duration\] RunTime=(\S+) sec; SentMessages=(\S+); ReceivedMessages=(\S+)[ \t]*")
_LAST = numbers.pattern(r"---> <MIN> observation =\s+(\S+)[ \t]*$", re.M)
#: the percentiles sockperf 3.7 prints, highest first
PERCENTILES = (99.999, 99.99, 99.9, 99.0, 90.0, 75.0, 50.0, 25.0)


@ranges.checked(TOOL)
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
    found += _percentiles(text[average.end() : last.start()], factor, dims, source)
    valid = lines.whole(_VALID_LINE, _VALID, text, TOOL, source, "[Valid Duration] line")
    if len(valid) != 1:
        raise ParseError(TOOL, source, f"{len(valid)} [Valid Duration] lines where sockperf prints one")
    seconds = numbers.positive(numbers.number(valid[0][1], TOOL, source, "RunTime"), TOOL, source, "RunTime")
    received = numbers.count(valid[0][3], TOOL, source, "ReceivedMessages")
    found.append(Measurement("transactions", float(received), "count"))
    found.append(Measurement("duration", seconds, "s"))
    found.append(Measurement("transaction_rate", received / seconds, "trans/s"))
    return found


def _percentiles(block: str, factor: float, dims: dict[str, str], source: str) -> list[Measurement]:
    """The round trip at each of PERCENTILES, each line read whole and once."""
    found: dict[float, Measurement] = {}
    for match in lines.whole(_PERCENTILE_LINE, _PERCENTILE, block, TOOL, source, "percentile line"):
        percentile, value = match.groups()
        pct = numbers.number(percentile, TOOL, source, "percentile")
        if pct in found:
            raise ParseError(TOOL, source, f"percentile {percentile} appears twice")
        rtt = numbers.number(value, TOOL, source, f"percentile {percentile}") * factor
        found[pct] = Measurement("rtt_percentile", rtt, "us", {**dims, "percentile": pct})
    missing = [f"{p:g}" for p in PERCENTILES if p not in found]
    if missing:
        raise ParseError(TOOL, source, f"no percentile line for {', '.join(missing)} (a line lost?)")
    return list(found.values())
