"""Parsers of the raw outputs Felter et al. (IBM, 2014) published with their paper.

The authors' repository (`thewmf/kvm-docker-comparison`) holds text logs of McCalpin's stream.c, a
modified gups.c, Intel's optimized LINPACK, fio 2.0.8, sysbench 0.4.12 and redis-benchmark 2.8, and
spreadsheets only for netperf and nuttcp. Each module here is a pure function from one file's text to
measurements. A log holds several invocations ("blocks"); a block that is cut off or incomplete raises
`ParseError` naming the tool and the file, so the importer can record it as a failed unit and keep the
others. No parser returns a number its input does not hold.
"""

from __future__ import annotations

import re

from kitlib.measure.parsers import numbers

RULE = numbers.pattern(r"^-{70,}\s*$", re.M)  # the run scripts' 80-dash rule; stream.c prints 61
_NUMACTL = numbers.pattern(r"numaopts <\s*(.*?)\s*>")


def numactl_options(header: str) -> str | None:
    """The numactl options a block's header line names (`Running stream numaopts < --localalloc >`)."""
    found = _NUMACTL.search(header)
    return found.group(1) if found else None


def split_blocks(text: str, opener: str) -> list[str]:
    """The blocks of a log the authors' scripts wrote: each begins with a rule line followed by a line
    starting with `opener` (e.g. "Running stream"). Text before the first rule is not a block."""
    parts = RULE.split(text)
    return [part.strip("\n") for part in parts if part.lstrip("\n").startswith(opener)]
