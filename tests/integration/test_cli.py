"""`kit envs`: asks the Docker engine, the kernel and the tools what this host offers."""

from __future__ import annotations

import subprocess
import sys

import pytest


def kit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kitlib.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.docker
def test_envs_lists_every_label_with_a_reason():
    done = kit("envs")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    labels = [line.split()[0] for line in lines]
    for label in ("native", "docker-host-volume", "docker-nat-overlay", "kvm", "kvm-tuned", "qemu-tcg"):
        assert label in labels
    for line in lines:
        assert line.split()[1] in ("yes", "no") and len(line.split()) > 2, line
