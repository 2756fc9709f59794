"""Round trips per window of a sockperf ping-pong run, as the kit reduces its `--full-log` on the peer
(kitlib/core/services/rtt_windows.py):

    kit-rtt-windows window_s=0.25 log_messages=10213 received=10213 complete=yes
    0.000, 1021, 53.874
    0.500, 0, -
    kit-rtt-windows end

A log that lacks its closing line, or whose lines do not match the ReceivedMessages of sockperf's
summary, was cut or mixed and is refused, as is an output without its `end` line. A window in which
no message was sent has no mean ("-"): it is left out of the sub-intervals, never filled in; the round
trip that outlasted it is in the mean of the window that sent it.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "kit-rtt-windows"
_HEADER = numbers.pattern(r"^kit-rtt-windows window_s=(\S+) log_messages=(\S+) received=(\S+) complete=(\S+)$")
END = "kit-rtt-windows end"


def _windows(text: str, source: str) -> tuple[float, list[tuple[float, int, float | None]]]:
    """(window seconds, [(start s, messages, mean rtt µs or None)]) of a complete output."""
    header, body = lines.framed(text, _HEADER, END, TOOL, source, "output", "kit-rtt-windows")
    window_s = numbers.positive(numbers.number(header[1], TOOL, source, "window_s"), TOOL, source, "window_s")
    logged = numbers.count(header[2], TOOL, source, "log_messages")
    if header[4] != "yes":
        raise ParseError(TOOL, source, "sockperf's log lacks its closing line (it was cut while written)")
    if header[3] == "-":
        raise ParseError(TOOL, source, "sockperf's log has no [Valid Duration] summary line")
    received = numbers.count(header[3], TOOL, source, "received")
    if logged != received:
        raise ParseError(TOOL, source, f"the log holds {logged} messages, sockperf's summary {received}")
    found: list[tuple[float, int, float | None]] = []
    for number, line in enumerate(body, start=2):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 3:
            raise ParseError(TOOL, source, f"line {number} is not a window line: {line[:80]!r}")
        start = numbers.number(fields[0], TOOL, source, f"window start on line {number}")
        messages = numbers.count(fields[1], TOOL, source, f"messages on line {number}")
        if abs(start - len(found) * window_s) > window_s / 2:
            raise ParseError(TOOL, source, f"line {number}: window at {start:g} s out of sequence")
        if (fields[2] == "-") != (messages == 0):
            raise ParseError(TOOL, source, f"line {number}: a mean must be given exactly when messages were sent")
        mean = None if messages == 0 else numbers.number(fields[2], TOOL, source, f"mean rtt on line {number}")
        found.append((start, messages, mean))
    if sum(messages for _, messages, _ in found) > logged:
        raise ParseError(TOOL, source, f"the windows count more messages than the log's {logged}")
    return window_s, found


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    """One pair of records per window: its messages and, where it sent any, their mean round trip."""
    _, found = _windows(text, source)
    out = []
    for start, messages, mean in found:
        dims = {"window_start_s": start}
        out.append(Measurement("window_messages", float(messages), "count", dims))
        if mean is not None:
            out.append(Measurement("window_rtt_mean", mean, "us", dims))
    return out


def intervals(text: str, source: str) -> tuple[list[float], float]:
    """The mean round trip of each window that sent a message, and the window in seconds."""
    window_s, found = _windows(text, source)
    return [mean for _, _, mean in found if mean is not None], window_s
