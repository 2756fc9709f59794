"""`kit hosts check FILE`: connect to every machine of an inventory (host keys pinned), and say what
each offers: its facts, its Docker engine, whether the benchmark image is there, and which environment
labels a run would use on it (`kit envs`, answered there). Optionally ship the image to every engine
that lacks it, all hosts at once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure import image as bench
from kitlib.measure.host import docker_remote, ssh
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.inventory import Inventory
from kitlib.measure.planning import REMOTE_KINDS
from kitlib.specs.labels import known_labels, parse_label

FACTS = (
    "echo hostname=$(hostname); echo kernel=$(uname -r); echo cpus=$(nproc --all);"
    " echo model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//');"
    " echo docker_cli=$(command -v docker || echo none)"
)


@dataclass
class HostReport:
    role: str
    target: str
    error: str | None = None
    facts: dict[str, str] = field(default_factory=dict)
    engine: dict[str, Any] | None = None
    engine_error: str | None = None
    image: str | None = None
    image_present: bool | None = None
    labels: list[tuple[str, bool, str]] = field(default_factory=list)


def check(inventory: Inventory, *, image: str | None = None, ship: bool = False, progress: bool = True) -> list:
    """One report per host; never raises for a host that refuses or fails (its report says why)."""
    from fabric import ThreadingGroup
    from tqdm.auto import tqdm

    hosts = inventory.hosts()
    reports = {role: HostReport(role, machine.target) for role, machine in hosts.items()}
    connections: dict[str, Any] = {}

    def connect(role: str):
        machine = hosts[role]
        key = str(inventory.ssh.key) if inventory.ssh.key else None
        return ssh.connect(machine.target, key_filename=key, known_hosts=str(inventory.ssh.known_hosts))

    with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
        futures = {role: pool.submit(connect, role) for role in hosts}
        for role, future in tqdm(futures.items(), desc="connecting", unit="host", disable=not progress, leave=False):
            try:
                connections[role] = future.result()
            except EnvironmentUnavailable as exc:
                reports[role].error = str(exc)
    try:
        if connections:
            roles = list(connections)
            group = ThreadingGroup.from_connections([connections[r] for r in roles])
            results = group.run(FACTS, hide=True, warn=True, timeout=60, in_stream=False)
            for role in roles:
                result = results.get(connections[role])
                out = getattr(result, "stdout", "") or ""
                reports[role].facts = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        sut = connections.get("sut")
        if sut is not None:
            _engine(reports["sut"], sut, inventory.sut.docker_socket, image, ship, progress)
        for role, report in reports.items():
            if report.error is None:
                report.labels = offered(report, role)
    finally:
        for connection in connections.values():
            connection.close()
    return list(reports.values())


def _engine(report: HostReport, connection, socket_path: str | None, image: str | None, ship: bool, progress) -> None:
    """The remote engine's facts and whether the image is there (shipped when asked)."""
    tunnel = docker_remote.DockerTunnel(connection, socket_path)
    with tunnel:
        try:
            client = docker_remote.remote_client(tunnel, report.target)
        except EnvironmentUnavailable as exc:
            report.engine_error = str(exc)
            return
        try:
            report.engine = docker_remote.engine_facts(client)
            if image is None:
                return
            report.image = image
            if ship:
                docker_remote.ensure_remote_image(
                    docker_client(),
                    client,
                    connection,
                    image,
                    socket_path=socket_path,
                    where=report.target,
                    progress=progress,
                )
            report.image_present = any(image in i.tags for i in client.images.list(name=image.split(":")[0]))
        finally:
            client.close()


def offered(report: HostReport, role: str) -> list[tuple[str, bool, str]]:
    """(label, available, reason) for every label, as a run with this host as the system under test sees it."""
    if role != "sut":
        return [("(client)", True, "runs the load generators; reaches the system under test at its address")]
    rows = []
    for label in known_labels():
        spec = parse_label(label)
        kind, network = spec.kind, spec.network
        if kind not in REMOTE_KINDS:
            rows.append((label, False, "the kit runs `native` and `docker-*` on a remote host"))
        elif kind == "native":
            rows.append((label, True, "the remote host itself, over SSH"))
        elif report.engine is None:
            rows.append((label, False, report.engine_error or "no Docker engine answers there"))
        else:
            reason = f"its Docker engine {report.engine.get('engine_version')} over SSH"
            if network == "nat":
                reason += "; the client reaches the published port through its DNAT"
            if report.image_present is False:
                reason += "; benchmark image missing there (shipped on the first run, or `--ship-image`)"
            rows.append((label, True, reason))
    return rows


def render(reports: list[HostReport]) -> str:
    """The check as text: one block per host."""
    lines = []
    if not any(report.role == "client" for report in reports):
        lines.append("client: this machine (runs the load generators)")
    for report in reports:
        lines.append(f"{report.role}: {report.target}")
        if report.error:
            lines.append(f"  not checked: {report.error}")
            continue
        f = report.facts
        lines.append(
            f"  host {f.get('hostname', '?')}, kernel {f.get('kernel', '?')}, {f.get('cpus', '?')} CPUs "
            f"({f.get('model', '?')}), docker CLI: {f.get('docker_cli', '?')}"
        )
        if report.engine:
            e = report.engine
            lines.append(
                f"  Docker engine {e['engine_version']} on {e['engine_host']}: id {e['engine_id']}, "
                f"data root {e['docker_root_dir']}, {e['storage_driver']}, cgroup {e['cgroup_driver']}"
            )
        elif report.role == "sut":
            lines.append(f"  Docker: {report.engine_error}")
        if report.image:
            lines.append(f"  benchmark image {report.image}: {'present' if report.image_present else 'missing'}")
        width = max((len(label) for label, _, _ in report.labels), default=0)
        for label, ok, reason in report.labels:
            lines.append(f"  {label:<{width}}  {'yes' if ok else 'no '}  {reason}")
    return "\n".join(lines)


def local_benchmark_image() -> str | None:
    """The benchmark image's tag as this machine's engine would build it, if its base is here (no pull)."""

    try:
        client = docker_client()
    except EnvironmentUnavailable:
        return None
    for base in (bench.DEFAULT_BASE, bench.LOCAL_BASE):
        if bench._exists(client, base):
            return f"{bench.REPOSITORY}:{bench.image_digest(client.images.get(base).id)}"
    return None


def built_here(image: str | None) -> bool:
    """Whether this machine's engine has `image` (so shipping it needs no build)."""

    if image is None:
        return False
    try:
        return bool(docker_client().images.list(name=image.split(":")[0], filters={"reference": image}))
    except EnvironmentUnavailable:
        return False
