"""Small programs the kit ships into environments (passed as `python3 -c SOURCE`, so every kind of
environment can run them without copying files)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def source(name: str) -> str:
    """The source text of a shipped program, e.g. `rr` for the request-response service."""
    return (Path(__file__).parent / f"{name}.py").read_text()


def command(name: str, *args: object) -> list[str]:
    """argv that runs the program `name` with `args` under python3 in any environment."""
    return ["python3", "-c", source(name), *map(str, args)]


def describe_source(text: str) -> str:
    """`<kitlib/services/rr.py sha256:…>` for a shipped program's source, else `<N chars sha256:…>`."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name != "__init__.py" and path.read_text() == text:
            return f"<kitlib/services/{path.name} sha256:{digest}>"
    return f"<{len(text)} chars sha256:{digest}>"
