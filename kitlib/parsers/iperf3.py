"""iperf3 `--json` output of a TCP test: receiver throughput, retransmits, CPU of both ends.

An output with an `error` key (e.g. "unable to connect to server: Connection refused") raises.
"""

from __future__ import annotations

import json

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "iperf3"


def parse(text: str, source: str) -> list[Measurement]:
    try:
        document = json.loads(text[text.index("{") :])
    except ValueError as exc:
        raise ParseError(TOOL, source, f"not iperf3 JSON ({exc})") from None
    if document.get("error"):
        raise ParseError(TOOL, source, f"iperf3 failed: {document['error']}")
    try:
        end = document["end"]
        received = end["sum_received"]["bits_per_second"]
        cpu = end["cpu_utilization_percent"]
    except (KeyError, TypeError):
        raise ParseError(TOOL, source, "no end-of-test summary (truncated output?)") from None
    found = [
        Measurement("throughput", received / 1e9, "Gbps"),
        Measurement("cpu_host", float(cpu["host_total"]), "%"),
        Measurement("cpu_remote", float(cpu["remote_total"]), "%"),
    ]
    retransmits = end.get("sum_sent", {}).get("retransmits")
    if retransmits is not None:
        found.append(Measurement("retransmits", float(retransmits), "count"))
    return found
