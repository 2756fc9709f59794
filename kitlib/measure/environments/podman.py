"""`podman-*` and `podman-rootless-*`: the system under test runs in a Podman container of the
benchmark image, driven through Podman's Docker-compatible API (`podman system service`, started
for the run and stopped after it) with the same SDK calls as `docker-*`.

Rootful Podman applies the label's cgroup limits; on cgroup v1 rootless Podman applies none, so its
commands are pinned to the system under test's CPUs with taskset and the record says the limits
are absent. Networks: `host`; rootful `nat` is Podman's bridge with published ports (DNAT from the
peer, as for Docker); rootless NAT is slirp4netns with published ports it forwards itself. Pasta
needs Podman 4.4, and is refused before that.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Sequence
from typing import Any

from kitlib.core import naming
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import OWNER_VARIABLE, pid_alive, run_bounded
from kitlib.measure.environments.base import Layout, Service
from kitlib.measure.environments.docker import DATA_DIR, DockerEnvironment, holding_container
from kitlib.measure.host import commands, forwarding
from kitlib.measure.host import podman_service as ps
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.ports import free_ports
from kitlib.specs.labels import EnvSpec
from kitlib.specs.labels import slug as label_slug

#: the first Podman that runs rootless containers on pasta
PASTA_SINCE = (4, 4)


class PodmanEnvironment(DockerEnvironment):
    """A Docker environment whose engine is a Podman service of the run's own: the workloads, the
    container's life and the teardown are Docker's; the engine, the image's copy and the limits differ."""

    def __init__(self, spec: EnvSpec, layout: Layout, *, run_label: str, image: str, client=None, **kwargs: Any):
        super().__init__(spec, layout, run_label=run_label, image=image, **kwargs)
        self.kind = spec.kind
        #: the Docker engine the benchmark image comes from
        self.source = client
        self.identity: ps.Identity | None = None
        self.service: ps.PodmanService | None = None
        self.image_id: str | None = None
        #: the hard limits of open files and processes the service runs under (see `container_kwargs`)
        self.limits: dict[str, int] = {}
        self._facts: dict[str, Any] = {}
        self._forward_rules: list[list[str]] = []

    @property
    def rootless(self) -> bool:
        return self.spec.kind == "podman-rootless"

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        import docker
        import docker.errors

        ok, reason = status(self.spec)
        if not ok:
            raise EnvironmentUnavailable(f"{self.label}: {reason}")
        try:
            self.identity = ps.rootless_identity() if self.rootless else ps.ROOT
            if self.client is None:
                self.service = ps.acquire(self.identity, self.run_label)
                self.client = docker.DockerClient(base_url=self.service.base_url, timeout=120)
                self.limits = dict(self.service.limits)
            self.image_id = ps.ensure_image(self.identity, self._source(), self.image)
            self._facts = _cached_facts(self.identity)
            self._create()
        except docker.errors.DockerException as exc:
            self.stop()
            raise EnvironmentUnavailable(f"{self.label}: Podman refused: {exc}") from exc
        except BaseException:
            self.stop()
            raise

    def _source(self):
        if self.source is None:
            self.source = docker_client()
        return self.source

    def _create(self) -> None:
        name = f"{self.run_label}-{label_slug(self.spec.label)}{self.name_suffix}"
        kwargs = self.container_options(name)
        if self.spec.storage == "volume":
            self.volume = self.client.volumes.create(name=f"{name}-data", labels=naming.docker_labels(self.run_label))
            kwargs["volumes"] = {self.volume.name: {"bind": DATA_DIR, "mode": "rw"}}
        self.run_container(self.image_id or self.image, kwargs)
        if network_mode(self.spec) == "bridge":
            self._open_forwarding()
        self.execute(["mkdir", "-p", DATA_DIR], timeout=30, cpus=None)

    def _open_forwarding(self) -> None:
        """An ACCEPT in FORWARD for new connections to the container's bridge address: CNI's firewall
        plugin lets only replies through, and Docker's FORWARD policy drops the rest, so the peer's
        DNAT-ed connections would never arrive. Commented with the run's label (`kit clean`)."""
        self.container.reload()
        networks = self.container.attrs.get("NetworkSettings", {}).get("Networks") or {}
        addresses = {n.get("IPAddress") for n in networks.values() if n.get("IPAddress")}
        for address in sorted(addresses):
            rule = ["FORWARD", *forward_rule(address, self.run_label)]
            done = commands.run(["iptables", "-w", "-I", *rule])
            if not done.ok:
                raise EnvironmentUnavailable(f"{self.label}: cannot add a FORWARD rule: {done.stderr.strip()}")
            self._forward_rules.append(rule)

    def container_options(self, name: str) -> dict[str, Any]:
        """The SDK's `containers.run` arguments, less the volume."""
        kwargs = container_kwargs(
            self.spec,
            name=name,
            labels=naming.docker_labels(self.run_label),
            owner=os.getpid(),
            limits=self.limits,
            cgroup=self._cgroup_options(),
        )
        if kwargs.get("ports") is not None:
            self.published = {port: self.host_ports.get(port, port) for port in self.layout.ports}
            kwargs["ports"] = published_ports(self.published)
        return kwargs

    def _cgroup_options(self) -> dict[str, Any]:
        return {} if self.rootless else super()._cgroup_options()

    def companion(self, index: int, ports: Sequence[int]) -> PodmanEnvironment:
        """A second container of this label on the same service (its own volume, other host ports)."""
        layout = Layout(list(self.layout.sut_cpus), list(self.layout.client_cpus), list(ports))
        host_ports = dict(zip(ports, free_ports(len(ports)), strict=True)) if self.spec.network != "host" else None
        twin = PodmanEnvironment(
            self.spec, layout, run_label=self.run_label, image=self.image, client=self.source, host_ports=host_ports
        )
        twin.client, twin.limits = self.client, dict(self.limits)
        twin.name_suffix = f"{self.name_suffix}-i{index}"
        twin.commands = self.commands
        self._companions.append(twin)
        twin.start()
        return twin

    def _teardown(self) -> None:
        if self.container is not None:
            try:  # a forced removal through the API first waits out SIGTERM's grace period (10 s)
                self.container.kill()
            except Exception:  # noqa: BLE001 - already stopped or gone
                pass
        super()._teardown()
        while self._forward_rules:
            forwarding.remove(self._forward_rules.pop())
        if self.service is not None:
            service, self.service = self.service, None
            self.client.close()
            self.client = None
            ps.release(service)

    # -- running things --------------------------------------------------------------------
    def execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        return super().execute(argv, timeout=timeout, cpus=self._cpus(cpus))

    def spawn(self, name: str, argv: list[str]) -> Service:
        if self.rootless:
            argv = ["taskset", "-c", ",".join(map(str, self._cpus(None))), *argv]
        return super().spawn(name, argv)

    def _cpus(self, cpus: Sequence[int] | None) -> Sequence[int] | None:
        """Rootless commands go to the system under test's CPUs by taskset: no cpuset cgroup pins them."""
        if cpus is not None or not self.rootless:
            return cpus
        return pinned_cpus(self.spec, self.layout.sut_cpus)

    def scratch_options(self, argv: list[str], labels: dict[str, str]) -> dict[str, Any]:
        """Podman's container options without network or name; rootless pins with taskset (no cgroup limits)."""
        options = container_kwargs(
            self.spec, name=None, labels=labels, owner=os.getpid(), limits=self.limits, cgroup={}
        )
        options.update(network_mode="none", command=argv, detach=False, init=False)
        options.pop("ports", None)
        options.pop("name", None)
        if not self.rootless:
            options["cpuset_cpus"] = ",".join(map(str, self.layout.sut_cpus))
        else:
            options["command"] = ["taskset", "-c", ",".join(map(str, self._cpus(None))), *argv]
        return options

    # -- where things are ------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.pop("engine_version", None)
        limits_applied = not self.rootless
        info.update(
            engine="podman",
            docker_image_id=self.image_id,
            **self._facts,
            network_mode=network_mode(self.spec),
            cgroup_limits_applied=limits_applied,
            cpu_pinning="cgroup cpuset" if limits_applied else "taskset in the container (no cgroup on v1 rootless)",
            ulimits=dict(self.limits),
            api_socket=self.service.socket if self.service else None,
        )
        return info


# -- what the SDK is asked --------------------------------------------------------------------
def network_mode(spec: EnvSpec) -> str:
    """Podman's network mode for a label: host, bridge (rootful NAT), slirp4netns or pasta (rootless).
    slirp4netns forwards the published ports itself: behind rootlessport (Podman's default proxy) a
    stream the container sends to the peer (nuttcp -r) stalls until the client's timeout."""
    if spec.network == "host":
        return "host"
    if spec.kind != "podman-rootless":
        return "bridge"
    return f"{spec.network}:port_handler=slirp4netns" if spec.network == "slirp4netns" else spec.network


def pinned_cpus(spec: EnvSpec, sut_cpus: Sequence[int]) -> list[int]:
    """The CPUs a label pins to: its `cpus` option (a list such as `0-1,3`), else the system under test's."""
    text = spec.options.get("cpus")
    if not text:
        return list(sut_cpus)
    cpus: list[int] = []
    for part in str(text).split(","):
        low, _, high = part.partition("-")
        cpus += list(range(int(low), int(high or low) + 1))
    return cpus


def forward_rule(address: str, run_label: str) -> list[str]:
    """The FORWARD rule (after the chain's name) that lets new connections reach `address`."""
    comment = f"{forwarding.COMMENT_PREFIX}{run_label}"
    return ["-d", f"{address}/32", "-m", "comment", "--comment", comment, "-j", "ACCEPT"]


def published_ports(published: dict[int, int]) -> dict[str, int]:
    """The SDK's `ports` for container port -> host port, TCP and UDP alike."""
    ports: dict[str, int] = {}
    for port, host_port in published.items():
        ports[f"{port}/tcp"] = host_port
        ports[f"{port}/udp"] = host_port
    return ports


def container_kwargs(
    spec: EnvSpec,
    *,
    name: str | None,
    labels: dict[str, str],
    owner: int,
    limits: dict[str, int],
    cgroup: dict[str, Any],
) -> dict[str, Any]:
    """`containers.run` arguments of a label's container. Every process in it carries the run's mark,
    so the interference sampler counts it as the run's and `kit clean` finds it; open files and
    processes are capped at the service's own hard limits (crun cannot raise them)."""
    import docker.types

    kwargs: dict[str, Any] = {
        **holding_container(name, labels),
        "environment": {OWNER_VARIABLE: str(owner)},
        "ulimits": [docker.types.Ulimit(name=n, soft=v, hard=v) for n, v in sorted(limits.items())],
        **cgroup,
    }
    mode = network_mode(spec)
    if mode != "bridge":
        kwargs["network_mode"] = mode
    if mode != "host":
        kwargs["ports"] = {}
    return kwargs


# -- what this host offers ------------------------------------------------------------------
def pasta_supported(version: tuple[int, ...] | None) -> bool:
    return version is not None and version[:2] >= PASTA_SINCE


@functools.lru_cache(maxsize=1)
def podman_version() -> tuple[int, ...] | None:
    if shutil.which("podman") is None:
        return None
    code, output = run_bounded(["podman", "--version"], timeout=30)
    return ps.parse_version(output) if code == 0 else None


@functools.lru_cache(maxsize=1)
def _docker_reason() -> str | None:
    try:
        docker_client().close()
    except EnvironmentUnavailable as exc:
        return str(exc)
    return None


def status(spec: EnvSpec) -> tuple[bool, str]:
    """(available, reason) of a Podman label on this host; each "no" names what to install or change."""
    version = podman_version()
    tools = {name: shutil.which(name) is not None for name in ("podman", "catatonit", "setpriv", "newuidmap")}
    tools.update(slirp4netns=shutil.which("slirp4netns") is not None, pasta=shutil.which("pasta") is not None)
    return requirements(
        spec,
        version=version,
        root=os.geteuid() == 0,
        tools=tools,
        docker_reason=_docker_reason(),
        tun=os.path.exists(ps.TUN),
    )


def requirements(
    spec: EnvSpec,
    *,
    version: tuple[int, ...] | None,
    root: bool,
    tools: dict[str, bool],
    docker_reason: str | None,
    tun: bool,
) -> tuple[bool, str]:
    """The verdict of `status` from the facts gathered (pure, so every branch is testable)."""
    if not tools.get("podman") or version is None:
        return False, "podman is not installed (apt-get install podman)"
    shown = ".".join(map(str, version))
    if not tools.get("catatonit"):
        return False, "catatonit is missing (apt-get install catatonit): the service runs under it"
    if not root:
        return False, "needs root (the service, the rootless user and the peer namespace are set up as root)"
    if docker_reason is not None:
        return False, f"the benchmark image comes from Docker: {docker_reason}"
    if spec.kind == "podman":
        reason = f"podman {shown} (rootful)"
        if spec.network == "nat":
            reason += "; client in a peer namespace reaches it through DNAT"
        return True, reason
    if not tools.get("setpriv"):
        return False, "setpriv is missing (apt-get install util-linux)"
    if not tools.get("newuidmap"):
        return False, "newuidmap is missing (apt-get install uidmap)"
    if spec.network == "pasta":
        if not pasta_supported(version):
            return False, f"podman {shown} predates pasta ({'.'.join(map(str, PASTA_SINCE))})"
        if not tools.get("pasta"):
            return False, "pasta is missing (apt-get install passt)"
    if spec.network == "slirp4netns":
        if not tools.get("slirp4netns"):
            return False, "slirp4netns is missing (apt-get install slirp4netns)"
        if not tun:
            return False, f"{ps.TUN} is missing (modprobe tun)"
    return True, f"podman {shown} rootless as user {ps.ROOTLESS_USER}" + (
        f", {spec.network}" if spec.network != "host" else ""
    )


@functools.lru_cache(maxsize=2)
def _cached_facts(identity: ps.Identity) -> dict[str, Any]:
    return ps.facts(ps.info(identity))


# -- what killed runs left --------------------------------------------------------------------
def _dead(owner: int | None) -> bool:
    return owner is not None and owner != os.getpid() and not pid_alive(owner)


def clean_leftovers() -> list[str]:
    """Containers, volumes and helper processes (service, conmon, slirp4netns) of dead runs, root's and
    the rootless user's."""
    if shutil.which("podman") is None or os.geteuid() != 0:
        return []
    identities = [ps.ROOT]
    rootless = ps.rootless_identity(create=False)
    if rootless is not None:
        identities.append(rootless)
    removed: list[str] = []
    for identity in identities:
        removed += _clean_objects(identity)
    removed += _clean_processes()
    # again: a listing fails while a dead run's service still holds its rootless containers' namespaces
    for identity in identities:
        removed += _clean_objects(identity)
    if rootless is not None:
        ps.stop_pause_process(rootless, os.getpid())
    return removed


def _clean_objects(identity: ps.Identity) -> list[str]:
    import json

    removed = []
    for noun, listing in (("container", ["ps", "-a"]), ("volume", ["volume", "ls"])):
        code, output = ps.podman_stdout(
            identity, [*listing, "--filter", f"label={naming.LABEL_RUN}", "--format", "json"]
        )
        if code != 0:
            continue
        try:
            entries = json.loads(output[output.find("[") :] or "[]")
        except ValueError:
            continue
        for entry in entries:
            labels = entry.get("Labels") or {}
            owner = int(labels.get(naming.LABEL_PID, "0") or 0) or None
            if not _dead(owner):
                continue
            name = entry.get("Name") or (entry.get("Names") or [entry.get("Id", "")])[0]
            command = ["rm", "-f", "-v", name] if noun == "container" else ["volume", "rm", "-f", name]
            if ps.podman(identity, command)[0] == 0:
                removed.append(f"podman {noun} {name} ({identity.user})")
    return removed


def _clean_processes() -> list[str]:
    import signal

    removed = []
    for pid, uid, comm, owner in ps.helper_processes():
        if _dead(owner):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            removed.append(f"podman helper {comm} {pid} (uid {uid}) of run pid {owner}")
    return removed
