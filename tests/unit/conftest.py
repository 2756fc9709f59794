"""What makes a unit test: it needs no root, no Docker engine, no network namespace and no server.

Every test in tests/unit runs with the Docker socket dead (`DOCKER_HOST`) and with tripwires first on
PATH for the programs that reach those things (`ip`, `docker`, `nsenter`, servers…): a tripwire records
its call and fails like a missing program, in this process and in every child (`kit …` run by a test),
and the test that made the call fails, naming it. In this process an audit hook catches what PATH does
not: such a program started by its absolute path, a connection to any Docker socket but the dead one
(code asking for an engine finds none, as on a machine without Docker; code reaching past DOCKER_HOST
for a real one fails). The fixtures that hand integration tests the real things fail here. A test
that needs any of them belongs in tests/integration, with its marker.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: programs that create namespaces, talk to or start an engine, a guest, a container or a server
FORBIDDEN = (
    "ip",
    "docker",
    "dockerd",
    "containerd",
    "nsenter",
    "unshare",
    "iptables",
    "ip6tables",
    "qemu-system-x86_64",
    "lxc-start",
    "lxc-create",
    "lxc-execute",
    "debootstrap",
    "redis-server",
    "mariadbd",
    "mysqld",
    "sshd",
)
#: where the Docker SDK and CLI are sent: a socket nothing listens on
DEAD_DOCKER = "unix:///nonexistent/kit-unit-tests/docker.sock"
DEAD_SOCKET = DEAD_DOCKER.removeprefix("unix://")

TRIPWIRE = """#!/bin/sh
echo "$(basename "$0") $*" >> {log}
echo "$(basename "$0"): not available to unit tests (tests/unit/conftest.py)" >&2
exit 127
"""


class Guard:
    """The tripwires (one folder for the session) and what was called through them or the audit hook."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="kit-unit-tripwires-"))
        atexit.register(shutil.rmtree, self.folder, True)
        self.log = self.folder / "calls.log"
        self.log.touch()
        self.bin = self.folder / "bin"
        self.bin.mkdir()
        for program in FORBIDDEN:
            wire = self.bin / program
            wire.write_text(TRIPWIRE.format(log=self.log))
            wire.chmod(0o755)
        self.active = False
        self.in_process: list[str] = []
        self._mark = 0

    def start(self) -> None:
        self.in_process.clear()
        self._mark = self.log.stat().st_size
        self.active = True

    def stop(self) -> list[str]:
        """Every call made since `start`, through a tripwire (any process) or seen by the audit hook."""
        self.active = False
        with open(self.log, encoding="utf-8", errors="replace") as handle:
            handle.seek(self._mark)
            by_tripwire = [line.strip() for line in handle if line.strip()]
        return by_tripwire + self.in_process

    @contextlib.contextmanager
    def expected(self) -> Iterator[list[str]]:
        """For the guard's own test: the calls made inside the block, which then count against no one."""
        self.start()
        found: list[str] = []
        try:
            yield found
        finally:
            found += self.stop()
            self.start()

    def audit(self, event: str, args: tuple) -> None:
        """A program of FORBIDDEN started by this process, by name or by path, or a Docker socket other
        than the dead one connected to: recorded, and refused before it happens."""
        if not self.active:
            return
        what = None
        if event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn"):
            program = os.path.basename(os.fsdecode(args[0] or ""))
            what = program if program in FORBIDDEN else None
        elif event == "os.system":
            words = os.fsdecode(args[0]).split()
            what = words[0] if words and os.path.basename(words[0]) in FORBIDDEN else None
        elif event == "socket.connect" and isinstance(args[1], str | bytes):
            path = os.fsdecode(args[1])
            what = f"the Docker socket {path}" if "docker" in path and path != DEAD_SOCKET else None
        if what:
            self.in_process.append(what)
            raise PermissionError(f"unit tests may not use {what} (tests/unit/conftest.py)")


GUARD = Guard()
sys.addaudithook(GUARD.audit)


@pytest.fixture(autouse=True)
def _pure(monkeypatch):
    """No root, engine, namespace or server: the Docker socket is dead, the programs are tripwires, and a
    call to one fails the test."""
    monkeypatch.setenv("DOCKER_HOST", DEAD_DOCKER)
    monkeypatch.setenv("PATH", f"{GUARD.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    GUARD.start()
    yield GUARD
    calls = GUARD.stop()
    if calls:
        pytest.fail(
            "a unit test needs no root, engine, namespace or server, but this one called: "
            + "; ".join(calls)
            + " (move it to tests/integration with its marker)",
            pytrace=False,
        )


def _integration_only(what: str):
    pytest.fail(f"a unit test may not ask for {what}: move it to tests/integration with its marker", pytrace=False)


@pytest.fixture
def docker_client():
    _integration_only("a Docker engine")


@pytest.fixture
def root_netns():
    _integration_only("root for network namespaces")


@pytest.fixture
def bench_image():
    _integration_only("the benchmark image")


@pytest.fixture
def namespace_host():
    _integration_only("a namespace host")


@pytest.fixture
def client_host():
    _integration_only("a namespace host")
