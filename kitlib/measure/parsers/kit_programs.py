"""What the kit's own measuring programs (kit-stream, kit-gups, kit-linpack, kit-pingpong) print,
read strictly.

Each prints `key value …` lines: first `<program> source <digest>`, last `end`, which it writes only
after its result validated. An output without that last line was cut off or failed, and is refused;
so is a line whose number is not a plain finite number.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.measure.parsers import numbers
from kitlib.measure.parsers.lines import finished


def lines(text: str, tool: str, source: str) -> list[list[str]]:
    """The output's lines as words, checked to be complete: the program's own first line, `end` last."""
    rows = [line.split() for line in finished(text).splitlines() if line.strip()]
    if not rows or rows[0][:2] != [tool, "source"] or len(rows[0]) != 3:
        raise ParseError(tool, source, f"not {tool} output (its first line is `{tool} source <digest>`)")
    if rows[-1] != ["end"]:
        raise ParseError(tool, source, "no closing `end` line: the output is cut off or the run failed")
    return rows


def number(word: str, tool: str, source: str, what: str, *, positive: bool = True) -> float:
    """A plain decimal number, the whole word (`kitlib.measure.parsers.numbers`); where `positive`, zero refused too."""
    value = numbers.number(word, tool, source, what)
    return numbers.positive(value, tool, source, what) if positive else value


def fields(rows: list[list[str]], tool: str, source: str, keys: tuple[str, ...]) -> dict[str, float]:
    """The `key value` lines named in `keys`, each present exactly once."""
    found: dict[str, float] = {}
    for row in rows:
        if len(row) == 2 and row[0] in keys:
            if row[0] in found:
                raise ParseError(tool, source, f"`{row[0]}` appears twice")
            found[row[0]] = number(row[1], tool, source, row[0], positive=False)
    missing = [k for k in keys if k not in found]
    if missing:
        raise ParseError(tool, source, f"no {', '.join(missing)} line")
    return found
