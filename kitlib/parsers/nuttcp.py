"""nuttcp: one bulk TCP transfer, in `-fparse` form or the human summary line.

    megabytes=4595.1218 real_seconds=2.00 rate_Mbps=19277.4341 tx_cpu=49 rx_cpu=43 retrans=0
     4245.6843 MB /   2.00 sec = 17811.3153 Mbps 47 %TX 54 %RX 0 retrans 0.19 msRTT

Gives Gbps, the sender's and receiver's CPU utilization (as nuttcp reports it) and retransmits.
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "nuttcp"
_PARSE = re.compile(r"(\w+)=([0-9.]+)")
_HUMAN = re.compile(r"([0-9.]+) MB /\s+([0-9.]+) sec =\s+([0-9.]+) Mbps\s+(\d+) %TX\s+(\d+) %RX(?:\s+(\d+) retrans)?")


def parse(text: str, source: str) -> list[Measurement]:
    for line in text.splitlines():
        fields = dict(_PARSE.findall(line))
        if "rate_Mbps" in fields:
            return _measurements(
                float(fields["rate_Mbps"]), fields.get("tx_cpu"), fields.get("rx_cpu"), fields.get("retrans")
            )
        match = _HUMAN.search(line)
        if match:
            return _measurements(float(match.group(3)), match.group(4), match.group(5), match.group(6))
    error = next((line.strip() for line in text.splitlines() if "nuttcp" in line and "Error" in line), None)
    raise ParseError(TOOL, source, error or "no rate line (transfer did not complete)")


def _measurements(mbps: float, tx: str | None, rx: str | None, retrans: str | None) -> list[Measurement]:
    found = [Measurement("throughput", mbps / 1000.0, "Gbps")]
    if tx is not None:
        found.append(Measurement("cpu_tx", float(tx), "%"))
    if rx is not None:
        found.append(Measurement("cpu_rx", float(rx), "%"))
    if retrans is not None:
        found.append(Measurement("retransmits", float(retrans), "count"))
    return found
