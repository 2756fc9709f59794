"""`native` on another machine: the system under test runs on a remote host reached with fabric.

The client then runs on this machine (the paper's second machine), so the peer is local and
reaches the remote host at its address.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from kitlib import ssh
from kitlib.environments.base import Environment, Service
from kitlib.procs import pinned


class RemoteService(Service):
    """A server started in its own session on the remote host; its pid is kept in a file there."""

    def __init__(self, name: str, env: RemoteNativeEnvironment, pidfile: str):
        self.name = name
        self.env = env
        self.pidfile = pidfile

    def _kill(self, signal_name: str) -> bool:
        """Signal the service's whole process group (it is a session leader)."""
        script = f'pid=$(cat {self.pidfile} 2>/dev/null) && /bin/kill -{signal_name} -- -"$pid"'
        return self.env._execute(["sh", "-c", script], timeout=30, cpus=[])[0] == 0

    def log_tail(self, lines: int = 15) -> str:
        log = self.pidfile.removesuffix(".pid") + ".log"
        code, output = self.env._execute(["tail", "-n", str(lines), log], timeout=30, cpus=[])
        return output.strip() if code == 0 else ""

    def alive(self) -> bool:
        starting = self.env._execute(["test", "-e", self.pidfile], timeout=30, cpus=[])[0] != 0
        return starting or self._kill("0")

    def stop(self) -> None:
        if self.env.connection is not None and self._kill("TERM"):
            wait = (
                f'pid=$(cat {self.pidfile}); for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; '
                'sleep 0.1; done; /bin/kill -KILL -- -"$pid"'
            )
            self.env._execute(["sh", "-c", wait], timeout=30, cpus=[])


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
        self.key_filename = key_filename
        self.known_hosts = known_hosts
        self.connection = None
        self.workdir: str | None = None

    def start(self) -> None:
        self.connection = ssh.connect(self.host, key_filename=self.key_filename, known_hosts=self.known_hosts)
        code, output = self._execute(["mktemp", "-d", f"/var/tmp/{self.run_label}-native-XXXXXX"], timeout=30, cpus=[])
        if code != 0:
            from kitlib.errors import EnvironmentUnavailable

            raise EnvironmentUnavailable(f"{self.host}: cannot make a scratch directory: {output.strip()}")
        self.workdir = output.strip()
        self._execute(["mkdir", "-p", f"{self.workdir}/data"], timeout=30, cpus=[])

    def _teardown(self) -> None:
        if self.connection is None:
            return
        if self.workdir:
            self._execute(["rm", "-rf", self.workdir], timeout=60, cpus=[])
            self.workdir = None
        self.connection.close()
        self.connection = None

    def _execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        return ssh.run(self.connection, self._pin(argv, cpus), timeout)

    def _pin(self, argv: list[str], cpus: Sequence[int] | None) -> list[str]:
        """argv pinned to `cpus` (the system under test's by default) of the remote host."""
        return pinned(argv, self.layout.sut_cpus if cpus is None else cpus)

    def _spawn(self, name: str, argv: list[str]) -> Service:
        pidfile = f"{self.workdir}/{name}.pid"
        inner = f"echo $$ > {pidfile}; exec {shlex.join(self._pin(argv, None))}"
        script = f"setsid sh -c {shlex.quote(inner)} > {self.workdir}/{name}.log 2>&1 < /dev/null &"
        self._execute(["sh", "-c", script], timeout=30, cpus=[])
        return RemoteService(name, self, pidfile)

    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        return self.address, port

    @property
    def data_dir(self) -> str:
        assert self.workdir is not None, "start() first"
        return f"{self.workdir}/data"

    def describe(self) -> dict[str, Any]:
        info = {**super().describe(), "remote_host": self.host, "address": self.address}
        if self.connection is not None:
            info["kernel"] = self._execute(["uname", "-r"], timeout=30, cpus=[])[1].strip()
            info["cpu_model"] = self._execute(
                ["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], timeout=30, cpus=[]
            )[1].strip()
        return info
