"""Commands on this host, bounded in time and logged for provenance.

Environments and peers log what runs inside them; this log holds what the kit runs on the host to
build them (`ip`, `iptables`, `umount`, `qemu-system-x86_64`, `dockerd` for a guest's image store …).
A run's `provenance.Session` takes the log into its `commands` (`where` = "host"), so `provenance.json`
holds every command line of a run.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import child_env, loggable, run_bounded_apart

_LOG: list[dict[str, Any]] = []
_LOCK = threading.Lock()


@dataclass(frozen=True)
class HostResult:
    argv: list[str]
    returncode: int | None  # None: killed at its timeout
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run(argv: Sequence[str], *, timeout: float = 60.0) -> HostResult:
    """Run argv on this host to completion (its process group killed at `timeout`), and log it."""
    argv = list(argv)
    started = time.monotonic()
    returncode, stdout, stderr = run_bounded_apart(argv, timeout=timeout)
    seconds = time.monotonic() - started
    _record({"argv": loggable(argv), "returncode": returncode, "seconds": round(seconds, 3)})
    return HostResult(argv, returncode, stdout, stderr, seconds)


def checked(argv: Sequence[str], *, timeout: float = 600.0) -> str:
    """stdout of a command that must succeed, else EnvironmentUnavailable with the end of what it said."""
    done = run(argv, timeout=timeout)
    if not done.ok:
        said = (done.stderr or done.stdout).strip()[-800:]
        ended = "timed out" if done.returncode is None else f"failed ({done.returncode})"
        raise EnvironmentUnavailable(f"`{' '.join(map(str, argv))}` {ended}: {said}")
    return done.stdout


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen:
    """Start a long-lived process on this host in its own session (so it can be stopped as a group),
    marked as the run's own; logged when it starts."""
    argv = list(argv)
    popen.setdefault("env", child_env())
    process = subprocess.Popen(argv, start_new_session=True, **popen)
    _record({"argv": loggable(argv), "service": argv[0].rsplit("/", 1)[-1], "pid": process.pid})
    return process


def note(argv: Sequence[str], returncode: int | None, seconds: float) -> None:
    """Log a command run with plumbing `run` does not offer (one end of a pipe between two processes)."""
    _record({"argv": loggable(list(argv)), "returncode": returncode, "seconds": round(seconds, 3)})


def drain() -> list[dict[str, Any]]:
    """The commands logged since the last drain, oldest first (the log is emptied)."""
    with _LOCK:
        taken = list(_LOG)
        _LOG.clear()
    return taken


def _record(entry: dict[str, Any]) -> None:
    with _LOCK:
        _LOG.append({"where": "host", **entry})
