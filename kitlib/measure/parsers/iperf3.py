"""iperf3 `--json` output of a TCP test: receiver throughput, retransmits, CPU of both ends.

An output with an `error` key (e.g. "unable to connect to server: Connection refused") raises.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers, ranges

TOOL = "iperf3"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    start = text.find("{")
    if start < 0:
        raise ParseError(TOOL, source, "no JSON in the output (not iperf3 --json output)")
    document = numbers.load_json(text[start:], TOOL, source)
    if not isinstance(document, dict):
        raise ParseError(TOOL, source, "not iperf3 JSON")
    if document.get("error"):
        raise ParseError(TOOL, source, f"iperf3 failed: {document['error']}")
    try:
        end = document["end"]
        received = end["sum_received"]["bits_per_second"]
        cpu = end["cpu_utilization_percent"]
        host, remote = cpu["host_total"], cpu["remote_total"]
        sent = end.get("sum_sent", {})
        retransmits = sent.get("retransmits")
    except (KeyError, TypeError, AttributeError):
        raise ParseError(TOOL, source, "no end-of-test summary (truncated output?)") from None
    found = [
        Measurement("throughput", numbers.checked(received, TOOL, source, "bits_per_second") / 1e9, "Gbps"),
        Measurement("cpu_host", numbers.checked(host, TOOL, source, "host_total"), "%"),
        Measurement("cpu_remote", numbers.checked(remote, TOOL, source, "remote_total"), "%"),
    ]
    if retransmits is not None:
        found.append(Measurement("retransmits", numbers.checked(retransmits, TOOL, source, "retransmits"), "count"))
    return found
