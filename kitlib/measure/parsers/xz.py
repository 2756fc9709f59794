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

from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "xz"
_INPUT = numbers.pattern(r"^kit-input-bytes (\S*)[ \t]*$", re.M)
_ELAPSED = numbers.pattern(r"^kit-elapsed-seconds (\S*)[ \t]*$", re.M)
_RATIO = numbers.pattern(r"^\(stdin\):.* = (\S+?)(?:,.*|[ \t]*)$", re.M)


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    text = lines.finished(text)
    size = numbers.count(lines.one(_INPUT, text, TOOL, source, "kit-input-bytes line")[1], TOOL, source, "input bytes")
    elapsed = lines.one(_ELAPSED, text, TOOL, source, "kit-elapsed-seconds line")[1]
    seconds = numbers.positive(numbers.number(elapsed, TOOL, source, "elapsed"), TOOL, source, "elapsed time")
    ratio = lines.one(_RATIO, text, TOOL, source, "xz -v summary line (xz did not finish?)")[1]
    return [
        Measurement("throughput", size / seconds / 1e6, "MB/s"),
        Measurement("elapsed", seconds, "s"),
        Measurement("ratio", numbers.number(ratio, TOOL, source, "ratio"), "ratio"),
    ]
