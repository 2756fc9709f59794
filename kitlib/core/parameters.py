"""Parameters as a notebook or a command receives them, read the same way everywhere.

`papermill -p NAME VALUE` and `kit run -p` hand a notebook text (`'["data/sample"]'`, `data/sample`, `10`),
`papermill -y`/`-f` and `execute_notebook(parameters=…)` hand it real values (a YAML list, a number), and
a notebook run by hand keeps its defaults. Every parameter goes through this module, so each form means
the same thing in every notebook and command, and a value of no form the kit reads is one
`ParameterError` naming the parameter, never a traceback further on (a list read character by
character as folders, `'['`).
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import yaml

from kitlib.core import paths
from kitlib.core.errors import ParameterError

#: what opens a list or a mapping written as text: such text must parse, or it is a mistake
_OPENERS = ("[", "{", "(")
#: words `as_flag` reads as yes and no (papermill gives True/False already; these come from text)
_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def parse_value(text: Any, name: str = "value") -> Any:
    """A value given as text: JSON (`["a", "b"]`, `10`), a Python literal (`['a']`, `(1, 2)`) or a YAML
    flow list or mapping (`[data/sample, results]`) where it parses as one, else the text itself (one
    name, one folder). Text that opens a list or a mapping and parses as none of them is an error
    naming `name`. Non-text values (what `-y` gives) pass through."""
    if not isinstance(text, str):
        return text
    stripped = text.strip()
    for loader in (json.loads, ast.literal_eval):
        try:
            return loader(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    if not stripped.startswith(_OPENERS):
        return text
    try:
        value = yaml.safe_load(stripped)
    except yaml.YAMLError:
        value = None
    if isinstance(value, (list, dict)):
        return value
    raise ParameterError(f'{name}: {_shown(text)} opens a list but is not one; write it as JSON, e.g. \'["a", "b"]\'')


def as_list(name: str, value: Any) -> list[str]:
    """A parameter that names one thing or several (folders, environment labels) as a list of text:
    None, "" and [] are the empty list (the default applies); one name is a list of one."""
    value = parse_value(value, name)
    if value is None or value == "":
        return []
    if isinstance(value, (str, os.PathLike)):
        return [str(value)]
    if not isinstance(value, (list, tuple)):
        raise ParameterError(f"{name}: a name or a list of names, got {_shown(value)}")
    items = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, os.PathLike, int, float)) or str(item) == "":
            raise ParameterError(f"{name}: every item is a name, got {_shown(item)} in {_shown(value)}")
        items.append(str(item))
    return items


def as_text(name: str, value: Any) -> str | None:
    """A parameter that names one thing (a folder, a file): None or "" when not given."""
    value = parse_value(value, name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike, int, float)):
        raise ParameterError(f"{name}: one name, got {_shown(value)}")
    return str(value)


def as_path(name: str, value: Any) -> Path | None:
    """A parameter that names one folder or file, a relative one taken against the project root as
    `results_dirs` are (a kernel JupyterLab starts runs in the notebook's folder): None when not given."""
    text = as_text(name, value)
    return None if text is None else paths.from_root(text)


def as_flag(name: str, value: Any) -> bool:
    """A yes/no parameter: a bool, or text such as `true`, `False`, `no`, `1`."""
    value = parse_value(value, name)
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ParameterError(f"{name}: true or false, got {_shown(value)}")


def as_number(name: str, value: Any) -> float:
    """A numeric parameter: a number, or text holding one."""
    value = parse_value(value, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"{name}: a number, got {_shown(value)}")
    return float(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:120] + "…"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$")
_UNIT_SECONDS = {None: 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
#: the longest time budget a run may be given: a week, past which a plan belongs split into runs
MAX_BUDGET_S = 7 * 24 * 3600.0


def as_seconds(name: str, value: Any) -> float:
    """A time budget: seconds as a number, or text like '1800', '45m', '1.5h'; positive and at most a week."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        found = _DURATION.match(str(value)) if isinstance(value, str) else None
        if not found:
            raise ParameterError(f"{name}: a duration such as 1800, 45m or 1.5h, got {_shown(value)}")
        seconds = float(found[1]) * _UNIT_SECONDS[found[2]]
    if not 0 < seconds <= MAX_BUDGET_S:
        raise ParameterError(f"{name}: between 0 and a week ({MAX_BUDGET_S:g} s), got {seconds:g} s")
    return seconds
