"""A remote Docker engine through the pinned SSH connection, and the benchmark image shipped to it.

Every connection to a local unix socket becomes one `docker system dial-stdio` on the remote host,
run over the already open (host-key pinned) fabric connection: the Docker SDK then talks to the remote
engine as to a local one, hijacked `exec` streams included. No second SSH client, no other trust.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import tempfile
import threading

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host.lifecycle import StartStop

#: bound on one read or write of a forwarded stream, and on shipping an image
CHANNEL_TIMEOUT_S = 600.0


def remote_docker_argv(socket_path: str | None, *args: str) -> list[str]:
    """`docker …` on the remote host, at its engine's socket where the inventory names one (else the
    session's default: DOCKER_HOST, or /var/run/docker.sock)."""
    return ["docker", *(["-H", f"unix://{socket_path}"] if socket_path else []), *args]


class DockerTunnel(StartStop):
    """A local unix socket forwarding to the remote engine (see the module docstring)."""

    def __init__(self, connection, socket_path: str | None = None):
        self.connection = connection
        self.command = shlex.join(remote_docker_argv(socket_path, "system", "dial-stdio"))
        self.path: str | None = None
        self._dir: str | None = None
        self._server: socket.socket | None = None
        self._channels: set = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()

    @property
    def base_url(self) -> str:
        return f"unix://{self.path}"

    def start(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="kit-docker-")
        self.path = f"{self._dir}/docker.sock"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(32)
        self._server.settimeout(0.5)
        threading.Thread(target=self._accept, name="docker-tunnel", daemon=True).start()

    def stop(self) -> None:
        self._closed.set()
        if self._server is not None:
            self._server.close()
            self._server = None
        with self._lock:
            channels, self._channels = list(self._channels), set()
        for channel in channels:
            _close_quietly(channel)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _accept(self) -> None:
        while not self._closed.is_set():
            server = self._server
            if server is None:
                return
            try:
                local, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(local,), daemon=True).start()

    def _serve(self, local: socket.socket) -> None:
        try:
            channel = self.connection.client.get_transport().open_session(timeout=30)
            channel.settimeout(CHANNEL_TIMEOUT_S)
            channel.exec_command(self.command)
        except Exception:  # noqa: BLE001 - the SDK sees a closed connection and reports it
            local.close()
            return
        with self._lock:
            self._channels.add(channel)
        upstream = threading.Thread(target=_pump_up, args=(local, channel), daemon=True)
        upstream.start()
        try:
            while True:
                data = channel.recv(65536)
                if not data:
                    break
                local.sendall(data)
        except (OSError, EOFError):
            pass
        finally:
            try:
                local.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            upstream.join(timeout=5)
            local.close()
            _close_quietly(channel)
            with self._lock:
                self._channels.discard(channel)


def _close_quietly(channel) -> None:
    """Close a forwarded stream whose SSH transport may already be gone (the engine's side ended the
    session, or the connection closed under it): paramiko then raises from sending the close."""
    import paramiko

    try:
        channel.close()
    except (OSError, EOFError, paramiko.SSHException):
        pass


def _pump_up(local: socket.socket, channel) -> None:
    try:
        while True:
            data = local.recv(65536)
            if not data:
                break
            channel.sendall(data)
        channel.shutdown_write()
    except (OSError, EOFError):  # the connection closed under it (the environment stopping)
        pass


def remote_client(tunnel: DockerTunnel, where: str):
    """A Docker SDK client of the engine at the far end of `tunnel`, or EnvironmentUnavailable."""
    import docker

    try:
        client = docker.DockerClient(base_url=tunnel.base_url, timeout=120)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001 - no docker CLI there, no engine, permission denied
        raise EnvironmentUnavailable(
            f"{where}: no Docker engine answers over SSH (`{tunnel.command}` there): {str(exc).splitlines()[0][:200]}"
        ) from exc


def ensure_remote_image(
    local_client, client, connection, tag: str, *, socket_path: str | None, where: str, progress: bool = True
) -> str:
    """The id of `tag` on the remote engine, shipping it there (`docker save` here, `docker load` there,
    streamed over the SSH connection with a progress bar) when it is missing."""
    import docker.errors

    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        pass
    if local_client is None:
        raise EnvironmentUnavailable(f"{where}: the benchmark image {tag} is not there and no local engine has it")
    image = local_client.images.get(tag)
    ship(image, connection, socket_path=socket_path, where=where, progress=progress)
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        raise EnvironmentUnavailable(f"{where}: `docker load` finished but {tag} is not there") from None


def ship(image, connection, *, socket_path: str | None, where: str, progress: bool = True) -> None:
    """Stream `docker save` of a local image into `docker load` on the remote host."""
    from tqdm.auto import tqdm

    tag = image.tags[0] if image.tags else image.id
    channel = connection.client.get_transport().open_session(timeout=30)
    channel.settimeout(CHANNEL_TIMEOUT_S)
    channel.exec_command(shlex.join(remote_docker_argv(socket_path, "load")))
    size = int(image.attrs.get("Size") or 0)
    with tqdm(
        total=size or None, unit="B", unit_scale=True, desc=f"image -> {where}", disable=not progress, leave=False
    ) as bar:
        try:
            for chunk in image.save(named=True):
                channel.sendall(chunk)
                bar.update(len(chunk))
            channel.shutdown_write()
            output = b""
            while data := channel.recv(65536):
                output += data
            status = channel.recv_exit_status()
            errors = channel.recv_stderr(65536)
        finally:
            _close_quietly(channel)
    if status != 0:
        text = (output + errors).decode(errors="replace").strip()[-800:]
        raise EnvironmentUnavailable(f"{where}: `docker load` of {tag} failed (exit {status}): {text}")


def engine_facts(client) -> dict:
    """What identifies a Docker engine in provenance, this host's (`provenance.collect_docker`) or a remote
    one's, under the same keys: its id, name (host), data root, version and API, storage and cgroup
    drivers, cgroup version, kernel and CPUs."""
    info, version = client.info(), client.version()
    return {
        "engine_id": info.get("ID"),
        "engine_host": info.get("Name"),
        "docker_root_dir": info.get("DockerRootDir"),
        "engine_version": version.get("Version"),
        "api": version.get("ApiVersion"),
        "storage_driver": info.get("Driver"),
        "cgroup_driver": info.get("CgroupDriver"),
        "cgroup_version": info.get("CgroupVersion"),
        "kernel": info.get("KernelVersion"),
        "cpus": info.get("NCPU"),
    }


__all__ = ["DockerTunnel", "engine_facts", "ensure_remote_image", "remote_client", "ship"]
