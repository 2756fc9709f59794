"""Bounded commands on real processes: a timeout ends the whole process group, also what the leader
left behind holding its output pipe."""

from __future__ import annotations

from pathlib import Path

from kitlib.core.procs import run_bounded


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_timeout_ends_what_the_exited_leader_left_running():
    # the shell exits at once; its background sleep keeps the pipe open, so the output never ends
    returncode, output = run_bounded(["sh", "-c", "sleep 60 & echo $!"], timeout=1)
    assert returncode is None
    left_behind = int(output.split()[0])
    assert not _running(left_behind)
