"""The output of a bundle of runs started at once on one wall clock (`experiments.instances.at_once`):
a section line before each run's output, then `== elapsed <seconds>` for the whole bundle. The
scale-out parsers split it here and parse each section with the tool's own parser."""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.measure.parsers import lines, numbers

_ELAPSED = numbers.pattern(r"^== elapsed (\S*)\s*$")


def split(
    text: str, source: str, tool: str, header: re.Pattern[str], section: str
) -> tuple[list[tuple[re.Match[str], str]], float]:
    """([(the section line's match, its output)], elapsed seconds); a bundle without `section` lines,
    without its one elapsed line after them (cut short) or with a wall time that is not positive is
    refused, as is a line outside any section or a `== ` line of neither kind (a section line that no
    longer reads). Each output keeps its line ends, so the section's parser sees whether it was finished."""
    sections: list[tuple[re.Match[str], list[str]]] = []
    current: list[str] | None = None
    elapsed: list[str] = []
    for line in lines.finished(text).splitlines(keepends=True):
        head, end = header.match(line), _ELAPSED.match(line)
        if head:
            if elapsed:
                raise ParseError(tool, source, f"a '{section}' section after the '== elapsed' line")
            current = []
            sections.append((head, current))
        elif end:
            elapsed.append(end[1])
            current = None
        elif line.startswith("== ") or (current is None and line.strip()):
            raise ParseError(tool, source, f"a line of no '{section}' section: {line.strip()[:80]!r}")
        elif current is not None:
            current.append(line)
    if not sections:
        raise ParseError(tool, source, f"no '{section}' section (the load script did not run?)")
    if not elapsed:
        raise ParseError(tool, source, "no '== elapsed' line (the load script was cut short?)")
    if len(elapsed) > 1:
        raise ParseError(tool, source, f"{len(elapsed)} '== elapsed' lines: more than one bundle in one output")
    seconds = numbers.number(elapsed[0], tool, source, "elapsed time")
    numbers.positive(seconds, tool, source, "elapsed time")
    return [(head, "".join(output)) for head, output in sections], seconds
