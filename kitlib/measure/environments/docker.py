"""`docker-*`: the system under test runs in a container of the benchmark image (Docker SDK).

Options come from the label: network `host` or `nat` (bridge + published ports, reached through
DNAT from the peer), storage `volume` (a named volume at /data) or `overlay` (/data inside the
container's own union filesystem), and the cgroup limits cpuset, shares, quota, period, memory.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from kitlib.core import naming, numa
from kitlib.core.errors import CommandFailed, EnvironmentUnavailable
from kitlib.measure.environments.base import Environment, Layout, Service
from kitlib.measure.host import docker_runtimes, stranded_shims
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.ports import free_ports
from kitlib.measure.image import ensure_derived
from kitlib.specs.labels import slug as label_slug

DATA_DIR = "/data"


def holding_container(name: str | None, labels: dict[str, str]) -> dict[str, Any]:
    """The container an environment holds: idle under an init that reaps what `exec` leaves, its
    servers allowed real-time priority and locked memory as on the host (the workloads' own options)."""
    return {
        "name": name,
        "labels": labels,
        "detach": True,
        "init": True,
        "command": ["sleep", "infinity"],
        "cap_add": ["SYS_NICE", "IPC_LOCK"],
    }


class ContainerService(Service):
    """A server started with `docker exec`; its pid is kept in a file inside the container."""

    def __init__(self, name: str, container, pidfile: str):
        self.name = name
        self.container = container
        self.pidfile = pidfile

    def _signal(self, signal_name: str) -> int:
        script = f'pid=$(cat {shlex.quote(self.pidfile)} 2>/dev/null) && kill -{signal_name} "$pid"'
        try:
            return self.container.exec_run(["sh", "-c", script]).exit_code
        except Exception:  # container already gone
            return 1

    def log_tail(self, lines: int = 15) -> str:
        try:
            result = self.container.exec_run(["tail", "-n", str(lines), f"/tmp/kit-{self.name}.log"])
        except Exception:
            return ""
        return (result.output or b"").decode(errors="replace").strip()

    def alive(self) -> bool:
        try:
            starting = self.container.exec_run(["test", "-e", self.pidfile]).exit_code != 0
        except Exception:  # container gone
            return False
        return starting or self._signal("0") == 0

    def stop(self) -> None:
        if self._signal("TERM") != 0:
            return
        script = (
            f'pid=$(cat {shlex.quote(self.pidfile)}); for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; '
            'sleep 0.1; done; kill -KILL "$pid"'
        )
        try:
            self.container.exec_run(["sh", "-c", script])
        except Exception:
            pass


class DockerEnvironment(Environment):
    kind = "docker"

    def __init__(self, *args: Any, image: str, client=None, host_ports: dict[int, int] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.image = image
        self.client = client
        self.container = None
        self.volume = None
        self.published: dict[int, int] = {}
        #: host port of each published port (default: the same number, see `_create`)
        self.host_ports = host_ports or {}
        #: appended to the container's name, so companions of one label get names of their own
        self.name_suffix = ""
        self._companions: list[DockerEnvironment] = []

    @property
    def runtime(self) -> str | None:
        """The OCI runtime the label asks of the engine (`+runtime=NAME`); None: the engine's default."""
        return self.spec.options.get("runtime")

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        import docker.errors

        if self.client is None:
            self.client = docker_client()
        if self.runtime is not None:
            docker_runtimes.require_runtime(self.label, self.runtime, self.client, self.image)
        try:
            self._create()
        except docker.errors.DockerException as exc:  # the engine refused: say so as this environment's failure
            raise EnvironmentUnavailable(f"{self.label}: the Docker engine refused: {exc}") from exc

    def _create(self) -> None:
        labels = naming.docker_labels(self.run_label)
        name = f"{self.run_label}-{label_slug(self.spec.label)}{self.name_suffix}"
        kwargs = holding_container(name, labels)
        if self.runtime is not None:
            kwargs["runtime"] = self.runtime
        kwargs.update(self._cgroup_options())
        if self.spec.network == "host":
            kwargs["network_mode"] = "host"
        else:
            # the same number outside and inside: tools that tell their peer a data port (nuttcp, netperf)
            # keep working through NAT; the runner chose ports free on this host
            self.published = {port: self.host_ports.get(port, port) for port in self.layout.ports}
            kwargs["ports"] = {}
            for port, host_port in self.published.items():
                kwargs["ports"][f"{port}/tcp"] = host_port
                kwargs["ports"][f"{port}/udp"] = host_port
        if self.spec.storage == "volume":
            self.volume = self.client.volumes.create(name=f"{name}-data", labels=labels)
            kwargs["volumes"] = {self.volume.name: {"bind": DATA_DIR, "mode": "rw"}}
        self.run_container(self.image, kwargs)
        self.execute(["mkdir", "-p", DATA_DIR], timeout=30, cpus=None)

    def run_container(self, image: str, kwargs: dict[str, Any]) -> None:
        """`containers.run` in two steps: a container whose start fails (a runtime that cannot start
        it, a port its user-mode network cannot forward) is held, so stopping removes it."""
        self.container = self.client.containers.create(image, **{k: v for k, v in kwargs.items() if k != "detach"})
        self.container.start()

    def _cgroup_options(self) -> dict[str, Any]:
        options = self.spec.options
        cpus = options.get("cpus") or ",".join(str(c) for c in self.layout.sut_cpus)
        kwargs: dict[str, Any] = {"cpuset_cpus": cpus}
        if "shares" in options:
            kwargs["cpu_shares"] = options["shares"]
        if "quota" in options:
            kwargs["cpu_quota"] = options["quota"]
            kwargs["cpu_period"] = options.get("period", 100_000)
        elif "period" in options:
            kwargs["cpu_period"] = options["period"]
        if "mem" in options:
            kwargs["mem_limit"] = options["mem"]
        if "numa" in options:
            kwargs["cpuset_cpus"] = numa.require_node(self.label, options["numa"])
            kwargs["cpuset_mems"] = str(options["numa"])
        return kwargs

    def companion(self, index: int, ports: Sequence[int]) -> DockerEnvironment:
        """A second container of this label (same image, options, CPUs and engine; its own volume)
        serving `ports`; behind NAT they are published on other free host ports, since this
        container already holds the same numbers on the host."""
        layout = Layout(list(self.layout.sut_cpus), list(self.layout.client_cpus), list(ports))
        host_ports = dict(zip(ports, free_ports(len(ports)), strict=True)) if self.spec.network != "host" else None
        twin = DockerEnvironment(
            self.spec, layout, run_label=self.run_label, image=self.image, client=self.client, host_ports=host_ports
        )
        twin.name_suffix = f"{self.name_suffix}-i{index}"
        twin.commands = self.commands  # one command log per label, as provenance promises
        self._companions.append(twin)
        twin.start()
        return twin

    def _teardown(self) -> None:
        while self._companions:
            self._companions.pop().stop()
        if self.container is not None:
            try:
                self.container.remove(force=True, v=True)
            except Exception:  # already removed
                pass
            if self.runtime is not None:  # a sandbox runtime's shim may outlive its container
                stranded_shims.release_all(self.client, only=self.container.id)
            self.container = None
        if self.volume is not None:
            try:
                self.volume.remove(force=True)
            except Exception:
                pass
            self.volume = None

    # -- running things --------------------------------------------------------------------
    def execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        if self.container is None:
            raise EnvironmentUnavailable(f"{self.label}: container is not running")
        bounded = ["timeout", "--kill-after=5", f"{timeout:.0f}", *argv]
        if cpus is not None:
            bounded = ["taskset", "-c", ",".join(map(str, cpus)), *bounded]
        result = self.container.exec_run(bounded, demux=False)
        output = (result.output or b"").decode(errors="replace")
        return (None if result.exit_code in (124, 137) else result.exit_code), output

    def spawn(self, name: str, argv: list[str]) -> Service:
        pidfile = f"/run/kit-{name}.pid"
        log = shlex.quote(f"/tmp/kit-{name}.log")
        script = f"echo $$ > {shlex.quote(pidfile)}; exec {shlex.join(argv)} > {log} 2>&1"
        self.container.exec_run(["sh", "-c", script], detach=True)
        return ContainerService(name, self.container, pidfile)

    def derived_image(self, steps: list[str], repository: str) -> str:
        """An image of this engine FROM this environment's image, one layer per RUN step (cached by content)."""
        return ensure_derived(self.client, self.image, steps, repository)

    def run_in_scratch_container(self, image: str, argv: list[str], *, timeout: float = 600) -> str:
        """argv's output in a fresh container of `image` (no network; a fresh volume at /data on `volume`)."""
        labels = naming.docker_labels(self.run_label)
        volume = self.client.volumes.create(labels=labels) if self.spec.storage == "volume" else None
        container = self.client.containers.create(
            image,
            volumes={volume.name: {"bind": DATA_DIR, "mode": "rw"}} if volume else {},
            **self.scratch_options(argv, labels),
        )
        try:
            container.start()
            status = container.wait(timeout=timeout)
            output = container.logs().decode(errors="replace")
            if status.get("StatusCode") != 0:
                raise CommandFailed(self.label, argv[:2] + ["…"], status.get("StatusCode"), output)
            return output
        finally:
            container.remove(force=True)
            if volume is not None:
                volume.remove(force=True)

    def scratch_options(self, argv: list[str], labels: dict[str, str]) -> dict[str, Any]:
        """How a scratch container runs argv: this environment's runtime and CPUs, no network."""
        return {
            "command": argv,
            "runtime": self.runtime,
            "labels": labels,
            "network_mode": "none",
            "cpuset_cpus": ",".join(map(str, self.layout.sut_cpus)),
        }

    # -- where things are ------------------------------------------------------------------
    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        if self.spec.network == "host":
            return peer_host_address, port
        if port not in self.published:
            raise EnvironmentUnavailable(f"{self.label}: port {port} was not published (layout.ports)")
        return peer_host_address, self.published[port]

    @property
    def data_dir(self) -> str:
        return DATA_DIR

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {**super().describe(), "image": self.image}
        if self.client is not None:
            version = self.client.version()
            info["engine_version"] = version.get("Version")
            engine = self.client.info()
            info["storage_driver"] = engine.get("Driver")
            name = self.runtime or engine.get("DefaultRuntime") or "runc"
            info["runtime"] = {**docker_runtimes.facts(self.client, name), "default": self.runtime is None}
            info["cgroup"] = self._cgroup_options()
            info["published_ports"] = {str(k): v for k, v in self.published.items()}
            if self._companions:
                info["companions"] = [
                    {"container": c.container.name if c.container else None, "published_ports": c.published}
                    for c in self._companions
                ]
            try:
                info["image_id"] = self.client.images.get(self.image).id
            except Exception:
                pass
        return info
