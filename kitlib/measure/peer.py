"""The peer: where the load generator runs, the paper's second machine.

On one machine the peer is a network namespace joined to the host by a veth pair, so the client
crosses a real network stack and Docker's NAT is the real DNAT path. Without root the client
runs on loopback, which reaches a published Docker port through docker-proxy, not NAT: that
path is named `loopback` and NAT environments refuse it. On several machines the peer is a
remote host reached with fabric.
"""

from __future__ import annotations

import abc
import ipaddress
import os
import time
from collections.abc import Sequence
from typing import Any

from kitlib.core import naming
from kitlib.core.errors import CommandFailed, EnvironmentUnavailable, Notice
from kitlib.core.procs import loggable, pinned, run_bounded
from kitlib.measure.environments.base import CommandResult
from kitlib.measure.host import links, ssh
from kitlib.measure.host.lifecycle import StartStop


class Peer(StartStop, abc.ABC):
    """Runs the client side of a workload."""

    kind: str = "abstract"
    #: True when traffic from this peer to a published Docker port takes the NAT (DNAT) path.
    reaches_nat: bool = False

    def __init__(self, client_cpus: Sequence[int]):
        self.client_cpus = list(client_cpus)
        self.commands: list[dict[str, Any]] = []

    @property
    @abc.abstractmethod
    def host_address(self) -> str:
        """The address of the host under test, as the peer reaches it."""

    def run(self, argv: Sequence[str], *, timeout: float, check: bool = True) -> CommandResult:
        """Run a client command pinned to the client CPUs, bounded by `timeout` seconds."""
        argv = list(argv)
        started = time.monotonic()
        returncode, output = self._execute(pinned(argv, self.client_cpus), timeout)
        seconds = time.monotonic() - started
        self.commands.append(
            {
                "where": f"peer:{self.kind}",
                "argv": loggable(argv),
                "returncode": returncode,
                "seconds": round(seconds, 3),
            }
        )
        if returncode is None:
            raise CommandFailed(f"peer:{self.kind}", argv, None, output)
        result = CommandResult(argv, returncode, output, seconds, f"peer:{self.kind}")
        return result.check() if check else result

    @abc.abstractmethod
    def _execute(self, argv: list[str], timeout: float) -> tuple[int | None, str]: ...

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "host_address": self.host_address,
            "client_cpus": self.client_cpus,
            "reaches_nat": self.reaches_nat,
        }


class LocalPeer(Peer):
    """The client on this machine: on loopback (no second network stack, no NAT path), or, when the
    system under test is a remote host, the second machine itself."""

    kind = "loopback"

    def __init__(self, client_cpus: Sequence[int], host_address: str = "127.0.0.1", *, remote_sut: bool = False):
        super().__init__(client_cpus)
        self._host_address = host_address
        if remote_sut:  # this machine is the client's: it reaches published ports through the SUT's DNAT
            self.kind = "local"
            self.reaches_nat = True

    @property
    def host_address(self) -> str:
        return self._host_address

    def _execute(self, argv: list[str], timeout: float) -> tuple[int | None, str]:
        return run_bounded(argv, timeout=timeout)


class NamespacePeer(Peer):
    """A network namespace with a veth pair to the host: a second host on one machine."""

    kind = "netns"
    reaches_nat = True

    def __init__(self, client_cpus: Sequence[int], run_label: str):
        super().__init__(client_cpus)
        self.run_label = run_label
        self.namespace = run_label
        self.host_if = naming.interface_name(run_label, "h")
        self.peer_if = naming.interface_name(run_label, "p")
        self._subnet: ipaddress.IPv4Network | None = None
        self._created = False

    @property
    def host_address(self) -> str:
        if self._subnet is None:
            raise EnvironmentUnavailable("the peer namespace is not started")
        return str(self._subnet.network_address + 1)

    @property
    def peer_address(self) -> str:
        if self._subnet is None:
            raise EnvironmentUnavailable("the peer namespace is not started")
        return str(self._subnet.network_address + 2)

    def start(self) -> None:
        if os.geteuid() != 0:
            raise EnvironmentUnavailable("a peer namespace needs root (ip netns add)")
        self._subnet = links.free_subnet()
        host_ip, peer_ip = f"{self.host_address}/30", f"{self.peer_address}/30"
        self._created = True
        for argv in (
            ["ip", "netns", "add", self.namespace],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if],
            ["ip", "link", "set", self.peer_if, "netns", self.namespace],
            ["ip", "addr", "add", host_ip, "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            ["ip", "netns", "exec", self.namespace, "ip", "addr", "add", peer_ip, "dev", self.peer_if],
            ["ip", "netns", "exec", self.namespace, "ip", "link", "set", self.peer_if, "up"],
            ["ip", "netns", "exec", self.namespace, "ip", "link", "set", "lo", "up"],
            ["ip", "netns", "exec", self.namespace, "ip", "route", "add", "default", "via", self.host_address],
        ):
            links.ip(argv)

    def stop(self) -> None:
        if not self._created:
            return
        self._created = False
        links.quietly(["ip", "netns", "del", self.namespace])
        links.quietly(["ip", "link", "del", self.host_if])

    def _execute(self, argv: list[str], timeout: float) -> tuple[int | None, str]:
        return run_bounded(["ip", "netns", "exec", self.namespace, *argv], timeout=timeout)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "namespace": self.namespace,
            "peer_address": self.peer_address,
            "link": f"veth {self.host_if}<->{self.peer_if}",
        }


class RemotePeer(Peer):
    """A second machine reached over SSH with fabric; `host_address` is this host as it sees it."""

    kind = "remote"
    reaches_nat = True

    def __init__(
        self,
        client_cpus: Sequence[int],
        host: str,
        sut_address: str,
        *,
        key_filename: str | None = None,
        known_hosts: str | None = None,
    ):
        super().__init__(client_cpus)
        self.host = host
        self.sut_address = sut_address
        self.key_filename = key_filename
        self.known_hosts = known_hosts
        self._connection = None

    @property
    def host_address(self) -> str:
        return self.sut_address

    def start(self) -> None:
        self._connection = ssh.connect(self.host, key_filename=self.key_filename, known_hosts=self.known_hosts)

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _execute(self, argv: list[str], timeout: float) -> tuple[int | None, str]:
        from kitlib.measure.host import ssh

        return ssh.run(self._connection, argv, timeout)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "host": self.host}


def make_peer(plan, client_cpus: Sequence[int], run_label: str) -> Peer:
    """The peer the plan asks for: `auto` picks a namespace where root allows, else loopback; with a
    remote system under test the client runs here, on the second machine, unless a third is named
    (`peer="remote"`)."""
    kind = plan.peer
    if plan.sut_host and kind != "remote":
        return LocalPeer(client_cpus, plan.sut_address or _hostname_of(plan.sut_host), remote_sut=True)
    if kind == "auto":
        kind = "netns" if os.geteuid() == 0 else "loopback"
        if kind == "loopback":
            import warnings

            warnings.warn(
                "not root: the client runs on this host's loopback, not in a peer namespace; it crosses no "
                "second network stack, and Docker NAT environments are refused (loopback reaches a published "
                "port through docker-proxy, not NAT)",
                Notice,
                stacklevel=2,
            )
    if kind == "netns":
        return NamespacePeer(client_cpus, run_label)
    if kind == "loopback":
        return LocalPeer(client_cpus)
    if kind == "remote":
        if not plan.peer_host or not plan.sut_address:
            raise EnvironmentUnavailable("a remote peer needs peer_host and sut_address")
        return RemotePeer(
            client_cpus, plan.peer_host, plan.sut_address, key_filename=plan.ssh_key, known_hosts=plan.known_hosts
        )
    raise EnvironmentUnavailable(f"unknown peer kind {kind!r}; known: auto, netns, loopback, remote")


def _hostname_of(target: str) -> str:
    """`user@host:port` -> host."""
    return target.rpartition("@")[2].partition(":")[0]
