"""A busy loop that is not the test's own: its parent shell exits at once, so it is handed to pid 1
(or the nearest subreaper), as another tenant's process would be."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator


@contextlib.contextmanager
def orphan_busy_loop(seconds: int = 20) -> Iterator[int]:
    """Yield the pid of `timeout`, which bounds the loop and leads its process group; the group is
    killed on the way out, however the block ends."""
    shell = subprocess.run(
        ["sh", "-c", f"timeout {int(seconds)} sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    leader = int(shell.stdout)
    try:
        yield leader
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader, signal.SIGKILL)
