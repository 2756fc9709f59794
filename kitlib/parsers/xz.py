"""Timing of parallel LZMA compression (the paper's PXZ), as the cpu experiment runs it:

    bash -c "echo kit-input-bytes N; TIMEFORMAT='kit-elapsed-seconds %3R'; time xz -T T -2 -c -v < FILE > /dev/null"

which prints

    kit-input-bytes 16777234
    (stdin): 6392.9 KiB / 16.0 MiB = 0.390, 4.3 MiB/s, 0:03
    kit-elapsed-seconds 3.721

(a run under a second ends its line at the ratio: `(stdin): 1631.2 KiB / 4096.0 KiB = 0.398`).
Throughput is input bytes over the wall-clock time bash measured (10^6 bytes per MB); xz's own
line gives the compression ratio (its rate is rounded, so it is not used).
"""

from __future__ import annotations

import re

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "xz"
_INPUT = re.compile(r"^kit-input-bytes (\d+)\s*$", re.M)
_ELAPSED = re.compile(r"^kit-elapsed-seconds ([0-9.]+)\s*$", re.M)
_RATIO = re.compile(r"\(stdin\):.* = ([0-9.]+)(?:,|\s*$)", re.M)


def parse(text: str, source: str) -> list[Measurement]:
    size, elapsed, ratio = _INPUT.search(text), _ELAPSED.search(text), _RATIO.search(text)
    if not size or not elapsed:
        raise ParseError(TOOL, source, "no kit-input-bytes / kit-elapsed-seconds lines (truncated or failed run)")
    if not ratio:
        raise ParseError(TOOL, source, "no xz -v summary line: xz did not finish")
    seconds = float(elapsed.group(1))
    if seconds <= 0:
        raise ParseError(TOOL, source, f"elapsed time {seconds} s is not positive")
    return [
        Measurement("throughput", int(size.group(1)) / seconds / 1e6, "MB/s"),
        Measurement("elapsed", seconds, "s"),
        Measurement("ratio", float(ratio.group(1)), "ratio"),
    ]
