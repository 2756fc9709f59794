"""Parsers: pure functions from one tool's raw output to measurements.

Each parser module registers itself under the program's own name, so `kit parse TOOL FILE`
and the workloads find it in one place.

A parser never returns a number its input does not hold: it reads only a complete output (the
lines the tool finished, up to its closing line or structure), reads every number strictly
(`numbers`: ASCII digits only, every pattern built by `numbers.pattern`), reads a line it knows
whole or refuses it, leaves a value the tool did not print missing, holds each value to its
metric's physical range (`ranges`), and refuses anything else (a cut output, another tool's, two
runs in one, a key given twice) with ParseError naming the tool and the file.
tests/unit/test_parsers_property.py holds every registered parser to this on every real output
in tests/data/<tool>/.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from kitlib.core.errors import KitError, ParseError
from kitlib.core.records import Measurement

Parser = Callable[[str, str], list[Measurement]]
"""parser(text, source) -> measurements; `source` names the file in error messages."""

#: tool name -> module that defines `parse(text, source)`.
_MODULES = {
    "redis-benchmark": "kitlib.measure.parsers.redis_benchmark",
    "redis-info": "kitlib.measure.parsers.redis_info",
    "kit-rr": "kitlib.measure.parsers.rr",
    "kit-fileops": "kitlib.measure.parsers.fileops",
    "hpcc": "kitlib.measure.parsers.hpcc",
    "kit-stream": "kitlib.measure.parsers.kit_stream",
    "kit-gups": "kitlib.measure.parsers.kit_gups",
    "kit-linpack": "kitlib.measure.parsers.kit_linpack",
    "kit-pingpong": "kitlib.measure.parsers.kit_pingpong",
    "xz": "kitlib.measure.parsers.xz",
    "fio": "kitlib.measure.parsers.fio",
    "fio-iops-log": "kitlib.measure.parsers.fio_iops_log",
    "nuttcp": "kitlib.measure.parsers.nuttcp",
    "iperf3": "kitlib.measure.parsers.iperf3",
    "sockperf": "kitlib.measure.parsers.sockperf",
    "kit-rtt-windows": "kitlib.measure.parsers.rtt_windows",
    "netperf": "kitlib.measure.parsers.netperf",
    "sysbench": "kitlib.measure.parsers.sysbench",
    "kit-scaleout-load": "kitlib.measure.parsers.scaleout_load",
    "kit-scaleout-oltp": "kitlib.measure.parsers.scaleout_oltp",
    "locust": "kitlib.measure.parsers.locust",
}


def register(tool: str, module: str) -> None:
    """Make a parser module known under a tool name (for plug-ins and later experiments)."""
    _MODULES[tool] = module


def known_tools() -> list[str]:
    return sorted(_MODULES)


def get(tool: str) -> Parser:
    try:
        module = _MODULES[tool]
    except KeyError:
        raise KitError(f"no parser for {tool!r}; known tools: {', '.join(known_tools())}") from None
    return importlib.import_module(module).parse


def parse_file(tool: str, path: str | Path) -> list[Measurement]:
    """Parse one saved raw output file; unreadable or empty files raise ParseError."""
    path = Path(path)
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise ParseError(tool, path, f"cannot read file ({exc.strerror})") from exc
    return get(tool)(text, str(path))


__all__ = ["ParseError", "Parser", "get", "known_tools", "parse_file", "register"]
