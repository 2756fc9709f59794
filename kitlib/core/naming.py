"""Names and labels that mark every object a run creates, so `kit clean` can find leftovers.

A name carries the pid of the process that owns it: an object whose owner is gone is a leftover.
"""

from __future__ import annotations

import os
import re
import secrets

PREFIX = "kit"
LABEL_RUN = "org.kitlib.run"
LABEL_PID = "org.kitlib.pid"
_OWNED = re.compile(r"(?:^|[-_/])k[a-z]{0,3}?(\d+)x[0-9a-f]{4}\b")


def new_run_label() -> str:
    """A short unique token for one process's objects: kit<pid>x<random>."""
    return f"{PREFIX}{os.getpid()}x{secrets.token_hex(2)}"


def owner_pid(name: str) -> int | None:
    """The pid encoded in a name derived from `new_run_label`, or None if it is not one of ours."""
    match = _OWNED.search(name)
    return int(match.group(1)) if match else None


def interface_name(run_label: str, role: str) -> str:
    """A network interface name (at most 15 characters): k<role><pid>x<random>."""
    name = f"k{role}{run_label[len(PREFIX) :]}"
    if len(name) > 15:
        raise ValueError(f"interface name too long: {name}")
    return name


def docker_labels(run_label: str) -> dict[str, str]:
    return {LABEL_RUN: run_label, LABEL_PID: str(os.getpid())}
