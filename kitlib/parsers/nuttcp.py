"""nuttcp: one bulk TCP transfer, in `-fparse` form or the human summary line.

    megabytes=4595.1218 real_seconds=2.00 rate_Mbps=19277.4341 tx_cpu=49 rx_cpu=43 retrans=0
     4245.6843 MB /   2.00 sec = 17811.3153 Mbps 47 %TX 54 %RX 0 retrans 0.19 msRTT

Gives Gbps, the sender's and receiver's CPU utilization (as nuttcp reports it) and retransmits.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.parsers import lines, numbers
from kitlib.records import Measurement

TOOL = "nuttcp"
_PARSE = re.compile(r"^(?=.*\brate_Mbps=).*$", re.M)
_FIELD = re.compile(r"(\w+)=(\S*)")
_HUMAN = re.compile(
    r"^\s*(\S+) MB /\s+(\S+) sec =\s+(\S+) Mbps\s+(\S+) %TX\s+(\S+) %RX(?:\s+(\S+) retrans)?(?:\s.*)?$", re.M
)


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
