"""The output of a bundle of runs started at once on one wall clock (`experiments.instances.at_once`):
a section line before each run's output, then `== elapsed <seconds>` for the whole bundle. The
scale-out parsers split it here and parse each section with the tool's own parser."""

from __future__ import annotations

import re

from kitlib.errors import ParseError

_ELAPSED = re.compile(r"^== elapsed ([0-9.]+)\s*$")


def split(
    text: str, source: str, tool: str, header: re.Pattern[str], section: str
) -> tuple[list[tuple[re.Match[str], str]], float]:
    """([(the section line's match, its output)], elapsed seconds); a bundle without `section` lines,
    without its elapsed line (cut short) or with a wall time that is not positive is refused."""
    sections: list[tuple[re.Match[str], list[str]]] = []
    current: list[str] | None = None
    elapsed: float | None = None
    for line in text.splitlines():
        head, end = header.match(line), _ELAPSED.match(line)
        if head:
            current = []
            sections.append((head, current))
        elif end:
            elapsed, current = float(end[1]), None
        elif current is not None:
            current.append(line)
    if not sections:
        raise ParseError(tool, source, f"no '{section}' section (the load script did not run?)")
    if elapsed is None:
        raise ParseError(tool, source, "no '== elapsed' line (the load script was cut short?)")
    if elapsed <= 0:
        raise ParseError(tool, source, f"elapsed time {elapsed} s is not positive")
    return [(head, "\n".join(lines)) for head, lines in sections], elapsed
