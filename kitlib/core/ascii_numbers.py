"""Number patterns of ASCII digits only, shared by every reader of tool output and of records files.

Python's `\\d` and `float()` take any Unicode digit (`٢٦١٥٤` reads as 26154) and `float()` takes
`1_000` too: no tool prints either, and the kit never writes them, so a text holding one was edited
or corrupted. Every pattern that reads a number is built from here, where a digit is `[0-9]`.
"""

from __future__ import annotations

import re

DIGIT = "[0-9]"
#: a whole count: digits only
COUNT = f"{DIGIT}+"
#: a plain decimal, as C's printf and Python's repr print one: sign, digits, point, exponent
DECIMAL = rf"[+-]?(?:{DIGIT}+(?:\.{DIGIT}*)?|\.{DIGIT}+)(?:[eE][+-]?{DIGIT}+)?"


def pattern(regex: str, flags: int = 0) -> re.Pattern[str]:
    """`regex` compiled with `\\d`, `\\w`, `\\s` and `\\b` meaning ASCII only, so a number it captures is
    made of ASCII digits."""
    return re.compile(regex, flags | re.ASCII)


_DECIMAL = pattern(DECIMAL)
_COUNT = pattern(COUNT)


def is_decimal(text: object) -> bool:
    """`text` is a whole plain decimal of ASCII digits (no spaces, `_`, `nan` or `inf`)."""
    return isinstance(text, str) and _DECIMAL.fullmatch(text) is not None


def is_count(text: object) -> bool:
    """`text` is a whole count of ASCII digits."""
    return isinstance(text, str) and _COUNT.fullmatch(text) is not None
