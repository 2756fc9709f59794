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

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "netperf"
_OMNI = numbers.pattern(r"^([^,\s]*),Trans/s,([^,\s]*),([^,\s]*),([^,\s]*),([^,\s]*),([^,\s]*)[ \t]*$", re.M)
_CLASSIC_HEAD = numbers.pattern(r"^Socket Size\s+Request\s+Resp\.\s+Elapsed\s+Trans\.\s*$", re.M)
_CLASSIC = numbers.pattern(r"^[ \t]*\d+[ \t]+\d+[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)[ \t]*$", re.M)
_OMNI_FIELDS = ("THROUGHPUT", "MEAN_LATENCY", "STDDEV_LATENCY", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY")


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    text = lines.finished(text)
    if _OMNI.search(text):
        omni = lines.one(_OMNI, text, TOOL, source, "omni result line")
        rate, mean, stddev, p50, p90, p99 = (
            numbers.number(v, TOOL, source, name) for v, name in zip(omni.groups(), _OMNI_FIELDS, strict=True)
        )
        found = [
            Measurement("transaction_rate", rate, "trans/s"),
            Measurement("rtt_mean", mean, "us"),
            Measurement("rtt_stddev", stddev, "us"),
        ]
        return found + [
            Measurement("rtt_percentile", value, "us", {"percentile": p})
            for p, value in ((50.0, p50), (90.0, p90), (99.0, p99))
        ]
    head = _CLASSIC_HEAD.search(text)
    if head:
        classic = lines.one(_CLASSIC, text[head.end() :], TOOL, source, "classic result line")
        request, response = (numbers.count(v, TOOL, source, "message size") for v in classic.groups()[:2])
        seconds = numbers.number(classic[3], TOOL, source, "elapsed seconds")
        rate = numbers.positive(numbers.number(classic[4], TOOL, source, "rate"), TOOL, source, "transaction rate")
        dims = {"request_bytes": request, "response_bytes": response}
        return [
            Measurement("transaction_rate", rate, "trans/s", dims),
            Measurement("rtt_mean", 1e6 / rate, "us", {**dims, "derived": "1e6/transaction_rate"}),
            Measurement("duration", seconds, "s", dims),
        ]
    error = next(
        (line.strip() for line in text.splitlines() if "netperf" in line.lower() and "error" in line.lower()), None
    )
    raise ParseError(TOOL, source, error or "no result line (omni selectors or classic table)")
