"""`docker-in-kvm` (or `docker-in-qemu-tcg` where only emulation exists): a Docker engine inside a
VM guest running the benchmark image, as the placement study's "Docker-Machine" did (seed 003).

The guest is the kit's VM (same disk, same image binaries); its Docker engine, started on demand,
listens on the guest's loopback only and the kit reaches it through a tunnel over the VM's pinned
SSH connection, so the Docker environment's own code runs unchanged against it. Network and storage
follow Docker's options (`+hostnet` for host networking, `+volume` for a volume; default bridge +
NAT and overlay, the study's setup); the peer reaches published ports through the guest's NIC and
the guest's own NAT.

The image reaches the guest's engine already loaded: a data root prepared on the host at native
speed (`kitlib.measure.vm.engine_store`) is attached as a copy-on-write disk and mounted at
/var/lib/docker, so start-up does not depend on how fast the emulated CPU unpacks layers.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import Environment, Layout, Service
from kitlib.measure.environments.docker import DockerEnvironment
from kitlib.measure.environments.vm import VmEnvironment
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.vm import engine_store
from kitlib.measure.vm.guest_image import ensure_image_archive
from kitlib.specs.labels import EnvSpec, parse_label

ENGINE_PORT = 2375
LOAD_TIMEOUT_S = 1800
TUNNEL_TIMEOUT_S = 30


def _scratch() -> Path:
    return paths.own_scratch_root()


class DockerInVmEnvironment(Environment):
    kind = "docker-in-vm"

    def __init__(self, spec: EnvSpec, layout: Layout, *, run_label: str, image: str, client=None, **kwargs: Any):
        super().__init__(spec, layout, run_label=run_label)
        self.image = image
        self.client = client
        self.vm_options = kwargs
        self.vm = None
        self.inner = None
        self._tunnel = contextlib.ExitStack()
        self._workdir: Path | None = None
        self.image_delivery: str | None = None

    @property
    def accel(self) -> str:
        return "tcg" if self.spec.label.startswith("docker-in-qemu-tcg") else "kvm"

    @property
    def emulated(self) -> bool:
        return self.accel == "tcg"

    def start(self) -> None:
        if self.client is None:
            self.client = docker_client()
        self._workdir = Path(tempfile.mkdtemp(prefix=f"{self.run_label}-dind-", dir=_scratch()))
        if shutil.which("dockerd") and shutil.which("qemu-img"):  # the guest's engine starts with the image
            drive = engine_store.overlay(engine_store.ensure_engine_store(self.client, self.image), self._workdir)
        else:  # the guest's engine loads it: a quarter of an hour and more under emulation
            drive = ensure_image_archive(self.client, self.image)
        vm_label = "qemu-tcg" if self.accel == "tcg" else "kvm"
        memory = self.spec.options.get("mem")
        vm_spec = parse_label(vm_label + (f"+mem{memory}" if memory else ""))
        self.vm = VmEnvironment(
            vm_spec,
            self.layout,
            run_label=self.run_label,
            image=self.image,
            client=self.client,
            extra_drives=[drive],
            accel=self.accel,
            **self.vm_options,
        )
        self.vm.start()
        if drive.suffix == ".qcow2":
            self.image_delivery = "data root prepared on the host, attached copy-on-write"
            self.vm.run(["sh", "-c", "mkdir -p /var/lib/docker && mount /dev/vdc /var/lib/docker"], timeout=120)
            self.vm.run(["systemctl", "start", "docker.service"], timeout=300)
            self.vm.run(["docker", "image", "inspect", "-f", "{{.Id}}", self.image], timeout=120)
        else:
            self.image_delivery = "docker load inside the guest"
            self.vm.run(["systemctl", "start", "docker.service"], timeout=300)
            self.vm.run(["docker", "load", "-i", "/dev/vdc"], timeout=LOAD_TIMEOUT_S)
        guest_engine = self._open_tunnel()
        guest_layout = Layout(sut_cpus=list(range(self.vm.config.vcpus)), client_cpus=[], ports=self.layout.ports)
        inner_spec = EnvSpec(self.label, "docker", self.spec.network, self.spec.storage, {})
        self.inner = DockerEnvironment(
            inner_spec, guest_layout, run_label=self.run_label, image=self.image, client=guest_engine
        )
        self.inner.start()

    def _open_tunnel(self):
        """A Docker client for the guest's engine, through a local port forwarded over SSH."""
        import docker

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            local_port = probe.getsockname()[1]
        self._tunnel.enter_context(
            self.vm.transport.connection.forward_local(
                local_port, remote_port=ENGINE_PORT, remote_host="127.0.0.1", local_host="127.0.0.1"
            )
        )
        deadline = time.monotonic() + TUNNEL_TIMEOUT_S
        while True:  # the tunnel's listener starts in a thread of its own
            try:
                client = docker.DockerClient(base_url=f"tcp://127.0.0.1:{local_port}", timeout=300)
                client.ping()
                return client
            except Exception as exc:
                if time.monotonic() > deadline:
                    raise EnvironmentUnavailable(
                        f"{self.label}: the guest's Docker engine does not answer through the tunnel: {exc}"
                    ) from exc
                time.sleep(0.5)

    def _teardown(self) -> None:
        if self.inner is not None:
            self.inner.stop()
            self.inner = None
        self._tunnel.close()
        if self.vm is not None:
            self.vm.stop()
            self.vm = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    # -- running things: the container inside the guest ------------------------------------------
    def execute(self, argv, *, timeout, cpus):
        if self.inner is None:
            raise EnvironmentUnavailable(f"{self.label}: not started")
        return self.inner.execute(argv, timeout=timeout, cpus=None)

    def spawn(self, name: str, argv: list[str]) -> Service:
        return self.inner.spawn(name, argv)

    # -- where things are ------------------------------------------------------------------
    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        _, mapped = self.inner.address_for_peer(port, peer_host_address)
        return self.vm.address, mapped

    @property
    def data_dir(self) -> str:
        return self.inner.data_dir

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "accel": self.accel,
            "image_delivery": self.image_delivery,
            "vm": self.vm.describe() if self.vm else None,
            "docker_in_guest": self.inner.describe() if self.inner else None,
            "engine_reached_through": "SSH tunnel to the guest's loopback",
        }
