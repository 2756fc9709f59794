"""Intel's optimized LINPACK (11.1.2, the `runme_xeon64` sample script) as the authors logged it.

One invocation solves one generated matrix `Number of trials to run` times and prints a line per trial,
then a "Performance Summary" with the Average and Maximal GFlops. The trials of one invocation share
the matrix, the process and its warmed caches: they are not independent runs. This parser therefore
returns one measurement per invocation, LINPACK's own Average over its trials (`gflops`), with the
number of trials as a dimension; an invocation whose trial lines fall short of the trials it announced,
or that lacks its summary, is cut off and raises.

An invocation begins at "This is a SAMPLE run script"; the authors' `Running linpack with numaopts <…>`
line before it (where there is one) names its numactl options.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers
from kitlib.measure.parsers.felter2014 import numactl_options

TOOL = "Intel optimized LINPACK"
_START = "This is a SAMPLE run script"
_TRIALS = numbers.pattern(r"^Number of trials to run\s*:\s*(\d+)", re.M)
_SIZE = numbers.pattern(r"^Number of equations to solve \(problem size\)\s*:\s*(\d+)", re.M)
_THREADS = numbers.pattern(r"^Number of threads:\s*(\d+)", re.M)
_CORES = numbers.pattern(r"^Number of cores:\s*(\d+)", re.M)
_CPUS = numbers.pattern(r"^Number of CPUs:\s*(\d+)", re.M)
_GHZ = numbers.pattern(r"^CPU frequency:\s*([0-9.]+) GHz", re.M)
_TRIAL = numbers.pattern(r"^(\d+)\s+(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+\S+\s+\S+\s+(pass|fail)\s*$", re.M)
_SUMMARY = numbers.pattern(r"Performance Summary \(GFlops\)\s*\n\s*\nSize.*\n(\d+)\s+\d+\s+\d+\s+([0-9.]+)\s+([0-9.]+)")


def blocks(text: str) -> list[tuple[str | None, str]]:
    """(numactl options or None, text) of every invocation, in order."""
    found: list[tuple[str | None, list[str]]] = []
    header: str | None = None
    for line in text.splitlines():
        if line.startswith("Running linpack"):
            header = numactl_options(line) or ""
            continue
        if line.startswith(_START):
            found.append((header or None, []))
            header = None
        if found:
            found[-1][1].append(line)
    return [(numa, "\n".join(lines)) for numa, lines in found]


def parse_block(block: str, source: str, numactl: str | None = None) -> list[Measurement]:
    trials, size, threads = _TRIALS.search(block), _SIZE.search(block), _THREADS.search(block)
    if trials is None or size is None or threads is None:
        raise ParseError(TOOL, source, "an invocation ends before its parameters (no LINPACK output)")
    announced = int(trials.group(1))
    lines = _TRIAL.findall(block)
    summary = _SUMMARY.search(block)
    if len(lines) < announced or summary is None:
        raise ParseError(
            TOOL, source, f"an invocation holds {len(lines)} of its {announced} trials and no summary (cut off)"
        )
    if any(line[5] != "pass" for line in lines):
        raise ParseError(TOOL, source, "an invocation has a trial whose residual check failed")
    dims: dict[str, object] = {
        "hpl_n": int(size.group(1)),
        "threads": int(threads.group(1)),
        "trials": announced,
    }
    for key, pattern in (("cores", _CORES), ("sockets", _CPUS)):
        match = pattern.search(block)
        if match:
            dims[key] = int(match.group(1))
    ghz = _GHZ.search(block)
    if ghz:
        dims["cpu_ghz"] = float(ghz.group(1))
    if numactl:
        dims["numactl"] = numactl
    return [Measurement("gflops", float(summary.group(2)), "GFLOPS", dims)]


def parse(text: str, source: str) -> list[Measurement]:
    found = blocks(text)
    if not found:
        raise ParseError(TOOL, source, f"no '{_START}' invocation")
    return [
        Measurement(m.metric, m.value, m.unit, {**m.dims, "block": i})
        for i, (numa, block) in enumerate(found)
        for m in parse_block(block, source, numa)
    ]
