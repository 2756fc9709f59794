"""What an executed notebook shows: the rows of the tables it displayed, read from its HTML outputs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat

_ROW = re.compile(r"<tr>\s*<th>\d+</th>\s*<td>([^<]*)</td>\s*<td>([^<]*)</td>")


def verdict_groups(notebook: Path) -> dict[str, list[tuple[str, str]]]:
    """{verdict: [(claim, host), …]} as the claims notebook displayed them: each `### verdict: n`
    heading and the (claim, host) of every row of the table that follows it. A table pandas cut
    short (`...`) is an AssertionError: its hidden rows are not shown."""
    cells = nbformat.read(notebook, 4).cells
    outputs = [o for cell in cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    groups: dict[str, list[tuple[str, str]]] = {}
    heading = None
    for output in outputs:
        data = output.get("data", {})
        markdown = data.get("text/markdown", "")
        if markdown.startswith("### "):
            heading = markdown[4:].rsplit(":", 1)[0]
            groups[heading] = []
        elif "text/html" in data and heading is not None:
            table = data["text/html"]
            assert "<td>...</td>" not in table, f"the table of {heading!r} is cut short"
            groups[heading] = [(html.unescape(c), html.unescape(h)) for c, h in _ROW.findall(table)]
            heading = None
    return groups
