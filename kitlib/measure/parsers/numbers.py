"""Numbers read from a tool's output strictly: the whole token, finite, and of a sign the metric can have.

`float()` alone takes ' 7', '1_000', '٢٦١٥٤', 'nan', 'inf' and '-3', and a token cut short still reads
as a smaller number; none of them is a measurement the tool printed, so every parser reads through here,
and builds its patterns with `pattern` (ASCII digits only, `kitlib.core.ascii_numbers`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from kitlib.core.ascii_numbers import is_count, is_decimal, pattern
from kitlib.core.errors import ParseError

__all__ = ["checked", "count", "load_json", "number", "pattern", "positive"]


def number(token: str, tool: str, source: str, what: str, *, negative: bool = False) -> float:
    """The decimal `token` as a float; anything but a whole finite decimal (and a negative one unless
    the metric can be negative) raises ParseError naming `what`."""
    if not is_decimal(token):
        raise ParseError(tool, source, f"{what} is not a number: {token!r}")
    return checked(float(token), tool, source, what, negative=negative)


def count(token: str, tool: str, source: str, what: str) -> int:
    """A count: ASCII digits only."""
    if not is_count(token):
        raise ParseError(tool, source, f"{what} is not a count: {token!r}")
    return int(token)


def checked(value: Any, tool: str, source: str, what: str, *, negative: bool = False) -> float:
    """A number already decoded (from JSON): a real int or float, finite, of an allowed sign."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(tool, source, f"{what} is not a number: {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ParseError(tool, source, f"{what} is not finite: {value!r}")
    if value < 0 and not negative:
        raise ParseError(tool, source, f"{what} cannot be negative: {value!r}")
    return value


def positive(value: float, tool: str, source: str, what: str) -> float:
    """A value the parser divides by (a duration, a rate): zero is refused as well."""
    if value <= 0:
        raise ParseError(tool, source, f"{what} {value} is not positive")
    return value


def load_json(text: str, tool: str, source: str) -> Any:
    """A JSON document whose numbers are finite and whose objects name each key once: Python's json takes
    NaN and Infinity, and of a key given twice keeps the last; no tool means either."""

    def refuse(constant: str) -> Any:
        raise ParseError(tool, source, f"JSON holds {constant}, not a number")

    def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise ParseError(tool, source, f"JSON gives the key {key!r} twice in one object")
            found[key] = value
        return found

    try:
        return json.loads(text, parse_constant=refuse, object_pairs_hook=once)
    except ValueError as exc:
        raise ParseError(tool, source, f"JSON does not parse ({exc}); truncated output?") from None
