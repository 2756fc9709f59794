"""The system-container environment: the benchmark image's root filesystem booting systemd under
LXC, reached from the peer namespace, and nothing left after a run, a failure or a SIGKILL."""

from __future__ import annotations

import subprocess

import pytest

from kitlib import environments
from kitlib.errors import PlanError

from ..conftest import host_leftovers


def test_lxc_refuses_options_it_cannot_honour():
    assert environments.parse_label("lxc+cpus1").options == {"cpus": "1"}
    with pytest.raises(PlanError, match="do not apply to lxc"):
        environments.parse_label("lxc+quota5000")
    with pytest.raises(PlanError, match="do not apply to vm"):
        environments.parse_label("qemu-tcg+shares512")


def lxc_leftovers(owner_pid: int) -> list[str]:
    """Running containers (their LXC monitors), scratch folders, veths and FORWARD rules of `owner_pid`."""
    running = subprocess.run(["pgrep", "-af", "lxc monitor"], capture_output=True, text=True).stdout
    found = [f"monitor {line}" for line in running.splitlines() if f"/kit{owner_pid}x" in line]
    return found + host_leftovers(owner_pid, "kl")
