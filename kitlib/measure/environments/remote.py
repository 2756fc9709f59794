"""`native` on another machine: the system under test runs on a remote host reached with fabric
(an `SshTransport`, as a VM guest is; a system container's `Transport` runs lxc-attach).

The client then runs on this machine (the paper's second machine), so the peer is local and
reaches the remote host at its address.
"""

from __future__ import annotations

import functools
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import Environment, Service
from kitlib.measure.host import ssh


class RemoteService(Service):
    """A server started in its own session behind a transport; its pid is kept in a file there."""

    def __init__(self, name: str, transport: Transport, pidfile: str):
        self.name = name
        self.transport = transport
        self.pidfile = pidfile

    def _sh(self, script: str) -> int | None:
        return self.transport.execute(["sh", "-c", script], timeout=30, cpus=[])[0]

    def _kill(self, signal_name: str) -> bool:
        """Signal the service's whole process group (it is a session leader)."""
        pidfile = shlex.quote(self.pidfile)
        return self._sh(f'pid=$(cat {pidfile} 2>/dev/null) && /bin/kill -{signal_name} -- -"$pid"') == 0

    def log_tail(self, lines: int = 15) -> str:
        log = self.pidfile.removesuffix(".pid") + ".log"
        code, output = self.transport.execute(["tail", "-n", str(lines), log], timeout=30, cpus=[])
        return output.strip() if code == 0 else ""

    def alive(self) -> bool:
        starting = self.transport.execute(["test", "-e", self.pidfile], timeout=30, cpus=[])[0] != 0
        return starting or self._kill("0")

    def stop(self) -> None:
        if self.transport.connected and self._kill("TERM"):
            self._sh(
                f'pid=$(cat {shlex.quote(self.pidfile)}); for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; '
                'sleep 0.1; done; /bin/kill -KILL -- -"$pid"'
            )


class Transport:
    """Commands run by `run` (argv, timeout -> returncode or None on timeout, output), pinned first
    by `pin` (argv, CPUs or None for the system under test's -> argv) of the environment holding it."""

    connected = True  # whether commands reach it (over SSH: while the connection is open)

    def __init__(self, run: Callable, pin: Callable, workdir: str | None = None):
        self.run = run
        self.pin = pin
        self.workdir = workdir

    def execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        return self.run(self.pin(argv, cpus), timeout)

    def spawn(self, name: str, argv: list[str]) -> Service:
        pidfile = f"{self.workdir}/{name}.pid"
        inner = f"echo $$ > {shlex.quote(pidfile)}; exec {shlex.join(self.pin(argv, None))}"
        log = shlex.quote(f"{self.workdir}/{name}.log")
        script = f"setsid sh -c {shlex.quote(inner)} > {log} 2>&1 < /dev/null &"
        self.execute(["sh", "-c", script], timeout=30, cpus=[])
        return RemoteService(name, self, pidfile)

    @property
    def data_dir(self) -> str:
        assert self.workdir is not None, "start() first"
        return f"{self.workdir}/data"


class SshTransport(Transport):
    """A host reached with fabric, its host key pinned; `connect` makes a scratch directory there
    (`workdir`, with `data` in it), `close` removes it and closes the connection."""

    def __init__(self, host: str, pin: Callable, **keys: str | None):
        super().__init__(lambda argv, timeout: ssh.run(self.connection, argv, timeout), pin)
        self.host = host
        self.open = functools.partial(ssh.connect, host, **keys)  # a new connection (key_filename, known_hosts)
        self.connection = None

    @property
    def connected(self) -> bool:
        return self.connection is not None

    def connect(self, run_label: str) -> None:
        self.connection = self.open()
        code, output = self.execute(["mktemp", "-d", f"/var/tmp/{run_label}-native-XXXXXX"], timeout=30, cpus=[])
        if code != 0:
            raise EnvironmentUnavailable(f"{self.host}: cannot make a scratch directory: {output.strip()}")
        self.workdir = output.strip()
        self.execute(["mkdir", "-p", f"{self.workdir}/data"], timeout=30, cpus=[])

    def close(self) -> None:
        if self.connection is None:
            return
        if self.workdir:
            self.execute(["rm", "-rf", self.workdir], timeout=60, cpus=[])
            self.workdir = None
        self.connection.close()
        self.connection = None

    def facts(self) -> dict[str, str]:
        """The host's kernel and CPU model, for provenance ({} while not connected)."""
        if self.connection is None:
            return {}
        model = "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"
        return {
            "kernel": self.execute(["uname", "-r"], timeout=30, cpus=[])[1].strip(),
            "cpu_model": self.execute(["sh", "-c", model], timeout=30, cpus=[])[1].strip(),
        }


class RemoteNativeEnvironment(Environment):
    kind = "native"

    def __init__(
        self,
        *args: Any,
        host: str,
        address: str | None = None,
        key_filename: str | None = None,
        known_hosts: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.host = host
        self.address = address or host.rpartition("@")[2].partition(":")[0]
        self.transport = SshTransport(host, self._pin, key_filename=key_filename, known_hosts=known_hosts)

    def start(self) -> None:
        self.transport.connect(self.run_label)

    def _teardown(self) -> None:
        self.transport.close()

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "remote_host": self.host, "address": self.address, **self.transport.facts()}
