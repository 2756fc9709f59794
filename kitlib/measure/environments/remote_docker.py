"""`docker-*` on another machine: the container runs on the remote host's own engine, driven over the
pinned SSH connection (see `kitlib.measure.host.docker_remote`); the benchmark image is shipped there when missing.

The client reaches the container at the remote host's address: with host networking on the remote
host's own stack, with NAT through the published port and the remote engine's DNAT rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kitlib.measure.environments.base import CommandResult
from kitlib.measure.environments.docker import DockerEnvironment
from kitlib.measure.host import docker_remote, ssh


class RemoteDockerEnvironment(DockerEnvironment):
    def __init__(
        self,
        *args: Any,
        host: str,
        address: str | None = None,
        key_filename: str | None = None,
        known_hosts: str | None = None,
        docker_socket: str | None = None,
        local_client=None,
        progress: bool = True,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.host = host
        self.address = address or host.rpartition("@")[2].partition(":")[0]
        self.key_filename = key_filename
        self.known_hosts = known_hosts
        self.docker_socket = docker_socket
        self.local_client = local_client
        self.progress = progress
        self.connection = None
        self.tunnel: docker_remote.DockerTunnel | None = None
        self.image_id: str | None = None

    def start(self) -> None:
        self.connection = ssh.connect(self.host, key_filename=self.key_filename, known_hosts=self.known_hosts)
        self.tunnel = docker_remote.DockerTunnel(self.connection, self.docker_socket)
        self.tunnel.start()
        self.client = docker_remote.remote_client(self.tunnel, self.host)
        self.image_id = docker_remote.ensure_remote_image(
            self.local_client,
            self.client,
            self.connection,
            self.image,
            socket_path=self.docker_socket,
            where=self.host,
            progress=self.progress,
        )
        super().start()

    def companion(self, index: int, ports: Sequence[int]) -> None:
        """On a remote engine a scale-out's instances share the one container (not yet one each)."""
        return None

    def _cgroup_options(self) -> dict[str, Any]:
        """The remote host's CPUs are its own: no cpuset unless the label names one."""
        options = super()._cgroup_options()
        if not options.get("cpuset_cpus"):
            options.pop("cpuset_cpus", None)
        return options

    def _teardown(self) -> None:
        super()._teardown()
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.tunnel is not None:
            self.tunnel.stop()
            self.tunnel = None
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def host_run(self, argv: Sequence[str], *, timeout: float, check: bool = True) -> CommandResult:
        """A command on the remote host itself (not in the container): its facts for provenance."""
        code, output = ssh.run(self.connection, list(argv), timeout)
        result = CommandResult(list(argv), -1 if code is None else code, output, 0.0, self.host)
        return result.check() if check else result

    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        if self.spec.network == "host":
            return self.address, port
        return self.address, super().address_for_peer(port, peer_host_address)[1]

    def describe(self) -> dict[str, Any]:
        info = {**super().describe(), "remote_host": self.host, "address": self.address}
        if self.client is not None:
            info["engine"] = docker_remote.engine_facts(self.client)
            info["image_id"] = self.image_id
            info["docker_socket"] = self.docker_socket or "the SSH session's default"
        return info
