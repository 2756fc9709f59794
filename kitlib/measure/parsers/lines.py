"""What a tool finished printing, and lines that must appear exactly once.

A tool ends every line it prints with a newline, so a last line without one was cut short (a
killed process, a full disk, a copy stopped midway) and is never read: a number on it may have
lost its last digits. A line a parser reads must appear once; twice means two runs in one file.
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError


def finished(text: str) -> str:
    """`text` up to its last newline: the lines the tool finished."""
    return text[: text.rfind("\n") + 1]


def one(pattern: re.Pattern[str], text: str, tool: str, source: str, what: str) -> re.Match[str]:
    """The one match of `pattern` in `text`; none or several raise ParseError naming `what`."""
    found = list(pattern.finditer(text))
    if not found:
        raise ParseError(tool, source, f"no {what} (truncated output, or not {tool} output)")
    if len(found) > 1:
        raise ParseError(tool, source, f"{len(found)} {what}s: more than one run in one output")
    return found[0]


def at_most_one(pattern: re.Pattern[str], text: str, tool: str, source: str, what: str) -> re.Match[str] | None:
    """The match of an optional line, or None; several raise ParseError."""
    return one(pattern, text, tool, source, what) if pattern.search(text) else None


def framed(
    text: str, header: re.Pattern[str], end: str, tool: str, source: str, what: str, opening: str
) -> tuple[re.Match[str], list[str]]:
    """The header's match and the lines between it and the closing `end` line of an output the kit
    frames so (a collection of logs, a reduced log; `opening` names its header's first word): without
    either line it was cut or is another's."""
    rows = finished(text).splitlines()
    opened = header.match(rows[0]) if rows else None
    if opened is None:
        raise ParseError(tool, source, f"no '{opening}' header line")
    if rows[-1] != end:
        raise ParseError(tool, source, f"no closing '{end}' line (the {what} was cut)")
    return opened, rows[1:-1]


def whole(
    loose: re.Pattern[str], strict: re.Pattern[str], text: str, tool: str, source: str, what: str
) -> list[re.Match[str]]:
    """Each line that `loose` finds (it begins as a line the parser reads) as `strict` reads it: a line
    that begins so but lost its number or its end is refused, never skipped."""
    found = []
    for line in loose.finditer(text):
        match = strict.fullmatch(line[0])
        if match is None:
            raise ParseError(tool, source, f"a {what} that does not read whole: {line[0].strip()[:80]!r}")
        found.append(match)
    return found
