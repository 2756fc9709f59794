"""hpcc's result file, `hpccoutf.txt`: the key=value summary between

    Begin of Summary section.
    HPL_Tflops=0.0859122
    HPL_N=8000
    StarSTREAM_Copy=22.3748
    SingleRandomAccess_GUPs=0.136231
    Success=1
    End of Summary section.

HPL in GFLOPS, STREAM in GB/s (as hpcc reports: 10^9 bytes/s) per kernel, RandomAccess in GUP/s.
A run that did not finish (no summary end, no `Success=` line, or Success=0) raises; so does a file
of two runs (hpcc appends each run to its file) and a key the summary gives twice, which no one run
prints: neither copy can be told to be the measured one.

hpcc's `Star` figures are per process (each of CommWorldProcs processes running at once), `Single`
is one process alone, `MPI` RandomAccess is the whole system. The system's figure, which the paper
reports, is the `System` variant: StarSTREAM × processes, StarRandomAccess × processes; each row
names its `method`, so a per-process number is never read as the machine's.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers, ranges

TOOL = "hpcc"
KERNELS = ("Copy", "Scale", "Add", "Triad")
_LINE = numbers.pattern(r"^(\w+)=(\S+)\s*$", re.M)


_BEGIN, _END = "Begin of Summary section.", "End of Summary section."


def summary(text: str, source: str) -> dict[str, str]:
    """The key=value lines of the file's one summary section, each key once, Success=1 among them."""
    for mark in (_BEGIN, _END):
        if text.count(mark) > 1:
            raise ParseError(TOOL, source, f"{text.count(mark)} '{mark}' lines: more than one run in one file")
    start, end = text.find(_BEGIN), text.find(_END)
    if start < 0 or end < start:
        raise ParseError(TOOL, source, "no complete summary section (hpcc did not finish)")
    fields: dict[str, str] = {}
    for key, value in _LINE.findall(text[start:end]):
        if key in fields:
            raise ParseError(TOOL, source, f"the summary gives {key} twice ({fields[key]} and {value})")
        fields[key] = value
    if "Success" not in fields:
        raise ParseError(TOOL, source, "the summary lacks its Success= line")
    if fields["Success"] != "1":
        raise ParseError(TOOL, source, f"hpcc reports Success={fields['Success']}")
    return fields


def _number(fields: dict[str, str], key: str, source: str) -> float:
    if key not in fields:
        raise ParseError(TOOL, source, f"summary lacks {key}")
    return numbers.number(fields[key], TOOL, source, key)


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    fields = summary(text, source)
    found = [
        Measurement("gflops", _number(fields, "HPL_Tflops", source) * 1000.0, "GFLOPS", {"benchmark": "HPL"}),
        Measurement("hpl_n", _number(fields, "HPL_N", source), "count", {"benchmark": "HPL"}),
    ]
    processes = numbers.positive(_number(fields, "CommWorldProcs", source), TOOL, source, "CommWorldProcs")
    methods = {
        "Star": "per process, all running (hpcc Star)",
        "Single": "one process alone (hpcc Single)",
        "MPI": "whole system, one distributed table (hpcc MPI)",
        "System": "system: hpcc Star per-process figure x processes",
    }
    for variant in ("Star", "Single"):
        for kernel in KERNELS:
            value = _number(fields, f"{variant}STREAM_{kernel}", source)
            found.append(
                Measurement(
                    "bandwidth",
                    value,
                    "GB/s",
                    {"benchmark": "STREAM", "kernel": kernel, "variant": variant, "method": methods[variant]},
                )
            )
    for kernel in KERNELS:
        found.append(
            Measurement(
                "bandwidth",
                _number(fields, f"StarSTREAM_{kernel}", source) * processes,
                "GB/s",
                {"benchmark": "STREAM", "kernel": kernel, "variant": "System", "method": methods["System"]},
            )
        )
    found.append(
        Measurement("vector_size", _number(fields, "STREAM_VectorSize", source), "count", {"benchmark": "STREAM"})
    )
    for variant in ("Star", "Single", "MPI"):
        found.append(
            Measurement(
                "gups",
                _number(fields, f"{variant}RandomAccess_GUPs", source),
                "GUP/s",
                {"benchmark": "RandomAccess", "variant": variant, "method": methods[variant]},
            )
        )
    found.append(
        Measurement(
            "gups",
            _number(fields, "StarRandomAccess_GUPs", source) * processes,
            "GUP/s",
            {"benchmark": "RandomAccess", "variant": "System", "method": methods["System"]},
        )
    )
    found.append(Measurement("processes", processes, "count", {"benchmark": "hpcc"}))
    found.append(
        Measurement("table_words", _number(fields, "RandomAccess_N", source), "count", {"benchmark": "RandomAccess"})
    )
    return found
