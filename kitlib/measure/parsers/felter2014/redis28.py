"""redis-benchmark 2.8 text output inside the authors' driver log (`run_<env>_<date>.txt`).

    [DBG] Run #1: Connections 50.
    SET: -nanSET: 100280.00…====== SET ======
      500000 requests completed in 4.63 seconds
      50 parallel clients
      50 bytes payload
    99.99% <= 1 milliseconds
    108084.74 requests per second

Each `[DBG] Run #k: Connections c.` opens one redis-benchmark invocation of several tests (PING, SET,
GET, LPUSH, …). redis-benchmark 2.8 prints the throughput of a test and its latency only as a
cumulative distribution at 1 ms resolution: no mean latency exists in this output, so none is returned.
A test without its "requests per second" line is cut off and raises.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers

TOOL = "redis-benchmark 2.8"
_RUN = numbers.pattern(r"^\[DBG\] Run #(\d+): Connections (\d+)\.", re.M)
_TEST = numbers.pattern(r"====== (\S+) ======")
_DONE = numbers.pattern(r"^\s+(\d+) requests completed in ([0-9.]+) seconds", re.M)
_CLIENTS = numbers.pattern(r"^\s+(\d+) parallel clients", re.M)
_PAYLOAD = numbers.pattern(r"^\s+(\d+) bytes payload", re.M)
_RPS = numbers.pattern(r"^([0-9.]+) requests per second", re.M)


def invocations(text: str) -> list[tuple[int, int, str]]:
    """(run number, connections, text) of every invocation the driver logged."""
    marks = list(_RUN.finditer(text))
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return [(int(m.group(1)), int(m.group(2)), text[m.end() : end]) for m, end in zip(marks, ends, strict=True)]


def parse_invocation(body: str, source: str) -> list[Measurement]:
    """Throughput per test; dims: op, clients, requests, value_size."""
    heads = list(_TEST.finditer(body))
    if not heads:
        raise ParseError(TOOL, source, "an invocation reports no test (cut off?)")
    found = []
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        section = body[head.end() : nxt.start() if nxt else len(body)]
        done, clients, payload, rps = (p.search(section) for p in (_DONE, _CLIENTS, _PAYLOAD, _RPS))
        if done is None or clients is None or rps is None:
            raise ParseError(TOOL, source, f"test {head.group(1)} lacks its summary lines (cut off)")
        dims: dict[str, object] = {
            "op": head.group(1),
            "clients": int(clients.group(1)),
            "requests": int(done.group(1)),
        }
        if payload:
            dims["value_size"] = int(payload.group(1))
        found.append(Measurement("throughput", float(rps.group(1)), "req/s", dims))
    return found


def parse(text: str, source: str) -> list[Measurement]:
    found = invocations(text)
    if not found:
        raise ParseError(TOOL, source, "no '[DBG] Run #k: Connections c.' line")
    return [
        Measurement(m.metric, m.value, m.unit, {**m.dims, "run": run})
        for run, _connections, body in found
        for m in parse_invocation(body, source)
    ]
