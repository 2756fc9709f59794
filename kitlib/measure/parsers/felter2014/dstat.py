"""dstat 0.7.2 CSV (`dstat -cndy --net-packets --output FILE`): packet totals over a whole series.

dstat appends to its file when started again, so a file may hold several preambles; their rows are
skipped. The `pkt/total` columns count packets on every interface but `lo`, one row a second. Summed over the
series and divided by its transactions, they say how many times each request crossed an interface:
once over the NIC with host networking, more often when a bridge and a veth pair (NAT) or a tap device
(KVM) are added. A file without those columns, or a row with another number of fields, raises.
"""

from __future__ import annotations

import csv
import io

from kitlib.core.ascii_numbers import is_decimal
from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement

TOOL = "dstat"


def parse(text: str, source: str) -> list[Measurement]:
    rows = list(csv.reader(io.StringIO(text)))
    group_row = next((i for i, row in enumerate(rows) if "pkt/total" in row), None)
    if group_row is None or group_row + 1 >= len(rows):
        raise ParseError(TOOL, source, "no 'pkt/total' columns (dstat run without --net-packets?)")
    header = rows[group_row + 1]
    try:
        start = rows[group_row].index("pkt/total")
    except ValueError:  # pragma: no cover - found above
        raise ParseError(TOOL, source, "no 'pkt/total' columns") from None
    if header[start : start + 2] != ["#recv", "#send"]:
        raise ParseError(TOOL, source, f"unexpected packet columns {header[start : start + 2]}")
    recv = send = 0.0
    samples = 0
    for number, row in enumerate(rows[group_row + 2 :], start=group_row + 3):
        if not any(field.strip() for field in row):
            continue
        if not all(is_decimal(field.strip()) for field in row):
            continue  # the preamble and headers dstat writes again when it is restarted on the same file
        values = [float(field) for field in row]
        if len(values) != len(header):
            raise ParseError(TOOL, source, f"row {number} has {len(row)} fields, the header {len(header)} (cut off?)")
        recv += values[start]
        send += values[start + 1]
        samples += 1
    if samples == 0:
        raise ParseError(TOOL, source, "no samples")
    return [
        Measurement("packets_received", recv, "packets"),
        Measurement("packets_sent", send, "packets"),
        Measurement("samples", float(samples), "count"),
    ]
