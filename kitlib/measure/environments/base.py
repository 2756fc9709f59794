"""The one interface every place a system under test can run in implements.

An environment is a context manager: whatever `start` creates, `stop` removes, and `stop` runs
on success, on an exception and on KeyboardInterrupt alike. Workloads see only this interface,
so a new kind of environment (a VM, a system container) needs no change in any workload.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kitlib.core.errors import CommandFailed, EnvironmentUnavailable
from kitlib.core.procs import loggable, pinned
from kitlib.measure.host.lifecycle import StartStop
from kitlib.specs.labels import EnvSpec


@dataclass(frozen=True)
class CommandResult:
    """What one command printed and how it ended."""

    argv: list[str]
    returncode: int
    output: str
    duration_s: float
    where: str

    def check(self) -> CommandResult:
        if self.returncode != 0:
            raise CommandFailed(self.where, self.argv, self.returncode, self.output)
        return self


class RunsCommands(Protocol):
    """Where a command runs to completion: an environment or a peer."""

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True) -> CommandResult: ...


def write_text(where: RunsCommands, path: str, text: str, timeout: float = 60.0) -> None:
    """A file written in an environment or on a peer (its folder made first); the text goes in as an
    argument, never through the shell's parser."""
    where.run(["sh", "-c", 'mkdir -p "$(dirname "$1")" && printf "%s" "$2" > "$1"', "sh", path, text], timeout=timeout)


@dataclass
class Layout:
    """How a run places the system under test and the load generator on this host's CPUs."""

    sut_cpus: list[int]
    client_cpus: list[int]
    ports: list[int] = field(default_factory=list)


class Service(abc.ABC):
    """A server process running in the background inside an environment."""

    name: str

    @abc.abstractmethod
    def stop(self) -> None: ...

    @abc.abstractmethod
    def alive(self) -> bool: ...

    def log_tail(self, lines: int = 15) -> str:
        """The last lines the service printed, for error messages ("" where they cannot be read)."""
        return ""


class Environment(StartStop, abc.ABC):
    """Where the system under test runs: `native`, `docker-*`, a VM, …"""

    kind: str = "abstract"
    transport = None  # how commands reach it behind a shell (`remote.Transport`), unless `execute` is its own
    address: str | None = None  # its own address where it has one (a remote host, a VM guest, a system container)

    def __init__(self, spec: EnvSpec, layout: Layout, *, run_label: str):
        self.spec = spec
        self.layout = layout
        self.run_label = run_label
        self._services: list[Service] = []
        self.commands: list[dict[str, Any]] = []

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def emulated(self) -> bool:
        """True where the CPU is emulated in software (QEMU TCG): everything runs tens of times
        slower, so sizes derived from the hardware must be bounded there."""
        return False

    # -- lifecycle -------------------------------------------------------------------------
    @abc.abstractmethod
    def start(self) -> None:
        """Create what the environment needs; must leave nothing behind if it fails half-way."""

    def stop(self) -> None:
        """Stop services, then remove what `start` created. Safe to call twice."""
        while self._services:
            self._services.pop().stop()
        self._teardown()

    @abc.abstractmethod
    def _teardown(self) -> None: ...

    # -- running things --------------------------------------------------------------------
    def run(
        self, argv: Sequence[str], *, timeout: float, check: bool = True, cpus: Sequence[int] | None = None
    ) -> CommandResult:
        """Run a command to completion inside the environment, bounded by `timeout` seconds."""
        argv = list(argv)
        started = time.monotonic()
        returncode, output = self.execute(argv, timeout=timeout, cpus=cpus)
        seconds = time.monotonic() - started
        result = CommandResult(argv, returncode, output, seconds, self.label)
        self.commands.append(
            {"where": self.label, "argv": loggable(argv), "returncode": returncode, "seconds": round(seconds, 3)}
        )
        if returncode is None:
            raise CommandFailed(self.label, argv, None, output)
        return result.check() if check else result

    def execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        """Run argv; return (returncode or None on timeout, combined output), neither logged nor checked:
        workloads call `run`; public so an environment built on another (Docker in a VM) runs through it."""
        return self.transport.execute(argv, timeout=timeout, cpus=cpus)

    def start_service(
        self, name: str, argv: Sequence[str], *, ready_port: int | None = None, ready_timeout: float = 30.0
    ) -> Service:
        """Start a server in the background, pinned to the SUT CPUs, and wait until its port answers."""
        service = self.spawn(name, list(argv))
        self._services.append(service)
        self.commands.append({"where": self.label, "argv": loggable(argv), "service": name})
        if ready_port is not None:
            self.wait_for_port(ready_port, ready_timeout, service)
        return service

    def hold(self, service: Service) -> Service:
        """Undo `service` (a change made for this environment's run) when this environment stops."""
        self._services.append(service)
        return service

    def exited_services(self) -> list[str]:
        """The held services that are no longer running, each with its last words: a server that
        crashed under the environment explains a client's failure better than the client can."""
        found = []
        for service in self._services:
            try:
                running = service.alive()
            except Exception:  # noqa: BLE001 - an environment gone: its state is reported apart
                continue
            if not running:
                tail = service.log_tail().strip()
                found.append(f"server {service.name} exited" + (f"; its last words: {tail[-400:]}" if tail else ""))
        return found

    def spawn(self, name: str, argv: list[str]) -> Service:
        """Start argv in the background, neither logged nor held (workloads call `start_service`)."""
        return self.transport.spawn(name, argv)

    def _pin(self, argv: list[str], cpus: Sequence[int] | None) -> list[str]:
        """argv pinned to `cpus` (the system under test's by default) where CPUs are numbered as here."""
        return pinned(argv, self.layout.sut_cpus if cpus is None else cpus)

    def wait_for_port(self, port: int, timeout: float, service: Service | None = None) -> None:
        """Poll from inside the environment until something listens on `port`."""

        deadline = time.monotonic() + timeout
        probe = ["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{int(port)}"]
        while time.monotonic() < deadline:
            if service is not None and not service.alive():
                tail = service.log_tail()
                raise EnvironmentUnavailable(
                    f"{self.label}: service {service.name} exited before port {port} answered"
                    + (f"; its last words:\n{tail}" if tail else "")
                )
            returncode, _ = self.execute(probe, timeout=5, cpus=None)
            if returncode == 0:
                return
            time.sleep(0.2)
        raise EnvironmentUnavailable(f"{self.label}: nothing listened on port {port} within {timeout:.0f} s")

    def companion(self, index: int, ports: Sequence[int]) -> Environment | None:
        """Another instance of this environment for one more server of a scale-out (its own
        container where the kind has containers), started now and removed when this one stops;
        None where the kind's instances are processes side by side in this environment."""
        return None

    # -- where things are ------------------------------------------------------------------
    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        """The (address, port) a client on the peer uses to reach `port` served in here."""
        return self.address, port

    @property
    def data_dir(self) -> str:
        """A directory on the storage under test (volume, overlay, host filesystem, VM disk)."""
        return self.transport.data_dir

    def describe(self) -> dict[str, Any]:
        """Facts for provenance: label, kind, options, engine versions."""
        return {
            "label": self.label,
            "kind": self.kind,
            "network": self.spec.network,
            "storage": self.spec.storage,
            "options": dict(self.spec.options),
            "sut_cpus": list(self.layout.sut_cpus),
            "ports": list(self.layout.ports),  # the run's, unless one was still held when it started
        }
