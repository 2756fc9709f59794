"""nuttcp: one bulk TCP transfer, in `-fparse` form or the human summary line.

    megabytes=4595.1218 real_seconds=2.00 rate_Mbps=19277.4341 tx_cpu=49 rx_cpu=43 retrans=0
     4245.6843 MB /   2.00 sec = 17811.3153 Mbps 47 %TX 54 %RX 0 retrans 0.19 msRTT

Gives Gbps, the sender's and receiver's CPU utilization (as nuttcp reports it) and retransmits.
With `-i` nuttcp prints a line per interval before the summary (`megabytes=918.0625 real_sec=0.50
rate_Mbps=15400.9004 retrans=0` in `-fparse` form): the summary is the line with the CPU figures,
the interval lines are read by `intervals`.
"""

from __future__ import annotations

import re
import statistics

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "nuttcp"
_PARSE = numbers.pattern(r"^(?=.*\brate_Mbps=)(?!.*\breal_sec=).*$", re.M)
_INTERVAL = numbers.pattern(r"^megabytes=\S+ real_sec=(\S+) rate_Mbps=(\S+)(?: retrans=\S+)?[ \t]*$", re.M)
_FIELD = numbers.pattern(r"(\w+)=(\S*)")
_HUMAN = numbers.pattern(
    r"^\s*(\S+) MB /\s+(\S+) sec =\s+(\S+) Mbps\s+(\S+) %TX\s+(\S+) %RX(?:\s+(\S+) retrans)?(?:\s.*)?$", re.M
)


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    text = lines.finished(text)
    if _PARSE.search(text):
        fields = dict(_FIELD.findall(lines.one(_PARSE, text, TOOL, source, "rate_Mbps line")[0]))
        if "rate_Mbps" not in fields:
            raise ParseError(TOOL, source, "the rate_Mbps line does not parse as key=value fields")
        return _measurements(
            source, fields["rate_Mbps"], fields.get("tx_cpu"), fields.get("rx_cpu"), fields.get("retrans")
        )
    if _HUMAN.search(text):
        match = lines.one(_HUMAN, text, TOOL, source, "summary line")
        return _measurements(source, match[3], match[4], match[5], match[6])
    error = next((line.strip() for line in text.splitlines() if "nuttcp" in line and "Error" in line), None)
    raise ParseError(TOOL, source, error or "no rate line (transfer did not complete)")


def _measurements(source: str, mbps: str, tx: str | None, rx: str | None, retrans: str | None) -> list[Measurement]:
    found = [Measurement("throughput", numbers.number(mbps, TOOL, source, "rate_Mbps") / 1000.0, "Gbps")]
    if tx is not None:
        found.append(Measurement("cpu_tx", numbers.number(tx, TOOL, source, "tx_cpu"), "%"))
    if rx is not None:
        found.append(Measurement("cpu_rx", numbers.number(rx, TOOL, source, "rx_cpu"), "%"))
    if retrans is not None:
        found.append(Measurement("retransmits", float(numbers.count(retrans, TOOL, source, "retrans")), "count"))
    return found


#: how far one interval's length may stray from the others' median: each interval's rate is per its own
#: `real_sec`, so unequal lengths bias nothing, but a timer that fires late makes one interval longer and
#: the next shorter (0.57 then 0.43 of 0.5 s on a loaded guest); one off by half an interval or more
#: means the transfer stalled, and its sub-intervals no longer describe a steady run
INTERVAL_TOLERANCE = 0.5


def intervals(text: str, source: str) -> tuple[list[float], float]:
    """Gbps of each `-i` interval line of a `-fparse` output that reached its summary, and the interval
    in seconds (the median of nuttcp's `real_sec`; each rate is already per its own interval's length,
    and a length further than INTERVAL_TOLERANCE from the median is an error)."""
    text = lines.finished(text)
    lines.one(_PARSE, text, TOOL, source, "rate_Mbps summary line")
    found = _INTERVAL.findall(text)
    if not found:
        raise ParseError(TOOL, source, "no interval lines (run without -i)")
    steps = [numbers.number(sec, TOOL, source, "real_sec") for sec, _ in found]
    every = numbers.positive(statistics.median(steps), TOOL, source, "real_sec")
    stray = sorted({s for s in steps if abs(s - every) > INTERVAL_TOLERANCE * every})
    if stray:
        raise ParseError(TOOL, source, f"intervals of different lengths: {stray} against {every:g} s")
    values = [numbers.number(mbps, TOOL, source, "interval rate_Mbps") / 1000.0 for _, mbps in found]
    return values, every
