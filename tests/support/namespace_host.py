"""A second machine made of real parts on this one: a network namespace with its own address, a real
`sshd` (its own host key, key-only login) and its own Docker engine (own data root, exec root, socket,
cgroup parent, hence its own bridge and NAT rules inside the namespace).

It stands for a server in a rack: the kit reaches it only over SSH, as it would a second machine. Its
SSH sessions see its own engine as their default (`SetEnv DOCKER_HOST`), its own hostname and its own
/etc/machine-id (a UTS and mount namespace around sshd), so provenance names it, not this host.
Everything it starts is stopped and removed by `stop()`, with bounded waits. A host whose owner was
killed is removed by `clean_orphans()`, which every test session runs first; a developer runs it with
`python -m tests.support.namespace_host --clean`.

    with NamespaceHost() as host:        # root; openssh-server and dockerd installed
        print(host.target, host.address, host.known_hosts, host.key)
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import kill_group, pid_alive
from kitlib.core.signals import default_dispositions
from kitlib.measure.host import links
from kitlib.measure.host.forwarding import ForwardRules, orphaned, remove
from kitlib.measure.host.lifecycle import StartStop

SSHD = "/usr/sbin/sshd"
DOCKERD = "dockerd"
#: bounded waits: for sshd/dockerd to answer, and for them to exit on SIGTERM
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


class NamespaceHost(StartStop):
    """A namespace `kithost<token>` joined by a veth pair, serving SSH on its address, port 22."""

    def __init__(
        self,
        *,
        docker: bool = True,
        workdir: str | Path | None = None,
        authorize: tuple[str, ...] = (),
        internet: bool = False,
    ):
        """`docker=False`: sshd alone (a client machine); `authorize`: more public key files allowed in;
        `internet`: its traffic to other networks masqueraded as this host's (a lab machine installing
        packages), by a NAT rule that goes with it."""
        self.docker = docker
        self.internet = internet
        self.authorize = tuple(authorize)
        token = secrets.token_hex(3)
        self.name = f"kithost{token}"
        self.namespace = self.name
        self.host_if, self.ns_if = f"kh{token}a", f"kh{token}b"
        self.hostname = f"kit-remote-{token}"
        self.run_dir = Path(f"/run/{self.name}")
        self._workdir_given = workdir is not None
        self.workdir = Path(workdir) if workdir else None
        self.subnet = None
        self._procs: list[subprocess.Popen] = []
        self._netns = False
        self._forward = None

    # -- where it is -----------------------------------------------------------------------
    @property
    def address(self) -> str:
        """The host's address as this machine (the client) reaches it."""
        return str(self.subnet.network_address + 2)

    @property
    def gateway(self) -> str:
        return str(self.subnet.network_address + 1)

    @property
    def target(self) -> str:
        return f"root@{self.address}:22"

    @property
    def docker_socket(self) -> str:
        return f"{self.run_dir}/docker.sock"

    @property
    def data_root(self) -> Path:
        return self.workdir / "docker"

    @property
    def cgroup_parent(self) -> str:
        return f"/{self.name}"

    @property
    def key(self) -> str:
        return str(self.workdir / "client")

    @property
    def known_hosts(self) -> str:
        return str(self.workdir / "known_hosts")

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if os.geteuid() != 0:
            raise EnvironmentUnavailable("a namespace host needs root (ip netns add)")
        for tool in (SSHD, "ssh-keygen", "unshare", "nsenter") + ((DOCKERD,) if self.docker else ()):
            if not shutil.which(tool):
                raise EnvironmentUnavailable(f"a namespace host needs {tool} (openssh-server, docker.io, util-linux)")
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir="/var/tmp"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "owner").write_text(f"{os.getpid()}\n")  # so `clean_orphans` can tell an orphan
        self._network()
        self._keys()
        self._sshd()
        if self.docker:
            self._dockerd()

    def _network(self) -> None:
        self.subnet = links.free_subnet()
        self._netns = True
        ns = ["ip", "netns", "exec", self.namespace]
        for argv in (
            ["ip", "netns", "add", self.namespace],
            ["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if],
            ["ip", "link", "set", self.ns_if, "netns", self.namespace],
            ["ip", "addr", "add", f"{self.gateway}/30", "dev", self.host_if],
            ["ip", "link", "set", self.host_if, "up"],
            [*ns, "ip", "addr", "add", f"{self.address}/30", "dev", self.ns_if],
            [*ns, "ip", "link", "set", self.ns_if, "up"],
            [*ns, "ip", "link", "set", "lo", "up"],
            [*ns, "ip", "route", "add", "default", "via", self.gateway],
        ):
            links.ip(argv, "set up the namespace host")
        # routed to and from other namespace hosts (a third machine for the client) through this host,
        # past Docker's FORWARD policy DROP; the two rules go with the host

        self._forward = ForwardRules(self.name, self.host_if)
        self._forward.start()
        if self.internet:
            links.ip(["iptables", "-w", "-t", "nat", "-A", *self._masquerade()], "masquerade the namespace host")

    def _masquerade(self) -> list[str]:
        return ["POSTROUTING", "-s", str(self.subnet), "!", "-o", self.host_if] + [
            "-m",
            "comment",
            "--comment",
            f"kitlib:{self.name}",
            "-j",
            "MASQUERADE",
        ]

    def _keys(self) -> None:
        for name in ("host", "client"):
            key = self.workdir / name
            if not key.exists():
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        keys = [self.workdir / "client.pub", *map(Path, self.authorize)]
        (self.workdir / "authorized_keys").write_text("".join(key.read_text() for key in keys))
        kind, blob = (self.workdir / "host.pub").read_text().split()[:2]
        Path(self.known_hosts).write_text(f"{self.address} {kind} {blob}\n")
        (self.workdir / "machine-id").write_text(secrets.token_hex(16) + "\n")
        config = [
            f"ListenAddress {self.address}",
            "Port 22",
            f"HostKey {self.workdir / 'host'}",
            f"AuthorizedKeysFile {self.workdir / 'authorized_keys'}",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            f"PidFile {self.run_dir / 'sshd.pid'}",
            f"SetEnv DOCKER_HOST=unix://{self.docker_socket}",
            "MaxSessions 64",
            "MaxStartups 64",
            "Subsystem sftp internal-sftp",  # as a stock sshd: files copied back over the same connection
        ]
        (self.workdir / "sshd_config").write_text("\n".join(config) + "\n")

    def _in_host(self, argv: list[str]) -> list[str]:
        """argv run inside the host: its network namespace, plus its own hostname and machine-id."""
        etc_docker = self.workdir / "etc-docker"  # its own engine identity (key.json), not this host's
        etc_docker.mkdir(exist_ok=True)
        machine_id, etc, name = (shlex.quote(str(v)) for v in (self.workdir / "machine-id", etc_docker, self.hostname))
        inner = (
            f"mount --bind {machine_id} /etc/machine-id && "
            f"mkdir -p /etc/docker && mount --bind {etc} /etc/docker && "
            f'hostname {name} && exec "$@"'
        )
        # nsenter, not `ip netns exec`: that remounts /sys, which hides the cgroup mounts dockerd needs
        netns = f"--net=/run/netns/{self.namespace}"
        return ["nsenter", netns, "unshare", "--uts", "--mount", "sh", "-c", inner, "sh", *argv]

    def inside(self, argv: list[str]) -> list[str]:
        """argv as this host runs it (another daemon of the machine: a Slurm node's slurmd)."""
        return self._in_host(argv)

    def _spawn(self, argv: list[str], log: str) -> subprocess.Popen:
        proc = spawn_daemon(argv, self.workdir / log)
        self._procs.append(proc)
        return proc

    def _sshd(self) -> None:
        Path("/run/sshd").mkdir(exist_ok=True)
        proc = self._spawn(self._in_host([SSHD, "-D", "-e", "-f", str(self.workdir / "sshd_config")]), "sshd.log")
        self._wait(lambda: _port_open(self.address, 22), proc, "sshd", "sshd.log")

    def _dockerd(self) -> None:
        argv = [
            DOCKERD,
            "--data-root",
            str(self.data_root),
            "--exec-root",
            str(self.run_dir / "exec"),
            "--pidfile",
            str(self.run_dir / "docker.pid"),
            "-H",
            f"unix://{self.docker_socket}",
            "--cgroup-parent",
            self.cgroup_parent,
            "--bip",
            "172.31.250.1/24",
            "--iptables=true",
            "--ip-forward=true",
        ]
        proc = self._spawn(self._in_host(argv), "dockerd.log")
        self._wait(lambda: _engine_answers(self.docker_socket), proc, "dockerd", "dockerd.log")

    def _wait(self, ready, proc: subprocess.Popen, what: str, log: str) -> None:
        if not wait_ready(ready, proc):
            tail = (self.workdir / log).read_text(errors="replace")[-1500:]
            raise EnvironmentUnavailable(f"{self.name}: {what} did not come up within {START_TIMEOUT_S:.0f} s:\n{tail}")

    def stop(self) -> None:
        """Remove the engine's containers, stop dockerd and sshd (TERM, bounded, then KILL), delete the
        namespace (its bridge and NAT rules go with it), the veth and its FORWARD rules, the cgroup and
        the data roots."""
        if self.docker and self._procs and _engine_answers(self.docker_socket):
            subprocess.run(
                ["sh", "-c", 'ids=$(docker ps -aq); [ -z "$ids" ] || docker rm -fv $ids; docker volume prune -f'],
                env={**os.environ, "DOCKER_HOST": f"unix://{self.docker_socket}"},
                capture_output=True,
                timeout=120,
                check=False,
            )
        for proc in reversed(self._procs):
            _terminate(proc)
        self._procs.clear()
        if self._forward is not None:
            self._forward.stop()
            self._forward = None
        nat = subprocess.run(["iptables", "-w", "-t", "nat", "-S", "POSTROUTING"], capture_output=True, text=True)
        for line in nat.stdout.splitlines():
            if f"kitlib:{self.name}" in line and line.startswith("-A "):
                rule = [w.strip('"') for w in shlex.split(line)[1:]]
                subprocess.run(["iptables", "-w", "-t", "nat", "-D", *rule], capture_output=True, check=False)
        if self._netns:
            self._netns = False
            subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True, check=False)
            subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, check=False)
        for cgroup in Path("/sys/fs/cgroup").glob(f"*/{self.name}"):
            _remove_cgroup(cgroup)
        _remove_cgroup(Path("/sys/fs/cgroup") / self.name)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        if self.workdir is not None and not self._workdir_given:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """What of this host still exists (empty after `stop()`)."""
        found = []
        if self.namespace in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split():
            found.append(f"namespace {self.namespace}")
        for pid in _pids_mentioning(self.name):
            found.append(f"process {pid}")
        if self.workdir is not None and self.workdir.exists() and not self._workdir_given:
            found.append(f"directory {self.workdir}")
        if self.run_dir.exists():
            found.append(f"directory {self.run_dir}")
        found += [f"cgroup {path}" for path in Path("/sys/fs/cgroup").glob(f"*/{self.name}")]
        for table in (["-S", "FORWARD"], ["-t", "nat", "-S", "POSTROUTING"]):
            rules = subprocess.run(["iptables", "-w", *table], capture_output=True, text=True).stdout
            found += [f"rule {line}" for line in rules.splitlines() if self.name in line]
        return found


def spawn_daemon(argv: list[str], log: Path) -> subprocess.Popen:
    """A daemon in its own session with default signal dispositions (it may be signalled whatever this
    process ignores), its output appended to `log`."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            restore_signals=True,
            preexec_fn=default_dispositions,
        )


def wait_ready(ready, proc: subprocess.Popen, timeout: float = START_TIMEOUT_S) -> bool:
    """Poll `ready()` until it holds (True), `proc` exits or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if ready():
            return True
        time.sleep(0.2)
    return False


def clean_orphans() -> list[str]:
    """Namespace hosts whose owning process is gone (a killed test or script): their processes, the
    containers of their engine (found by its cgroup parent), namespace, veth, rules and folders."""

    removed = []
    for owner_file in Path("/run").glob("kithost*/owner"):
        try:
            owner = int(owner_file.read_text().strip() or 0)
        except (OSError, ValueError):
            continue
        if owner and pid_alive(owner):
            continue
        host = NamespaceHost.__new__(NamespaceHost)
        token = owner_file.parent.name.removeprefix("kithost")
        NamespaceHost.__init__(host, docker=False)
        host.name = host.namespace = owner_file.parent.name
        host.host_if, host.ns_if = f"kh{token}a", f"kh{token}b"
        host.run_dir = owner_file.parent
        host.workdir = next(Path("/var/tmp").glob(f"{host.name}-*"), None)
        host._netns = True
        pids = set(_pids_mentioning(host.name))
        for procs in Path("/sys/fs/cgroup").glob(f"*/{host.name}/**/cgroup.procs"):
            pids.update(int(pid) for pid in procs.read_text().split())
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for rule in orphaned(lambda label, name=host.name: label == name):
            remove(rule)
        host.stop()
        removed.append(f"namespace host {host.name} of pid {owner} ({len(pids)} processes)")
    return removed


def _port_open(address: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((address, port)) == 0


def _engine_answers(path: str) -> bool:
    if not Path(path).exists():
        return False
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        try:
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
            return b"200 OK" in sock.recv(256)
        except OSError:
            return False


def _terminate(proc: subprocess.Popen) -> None:
    """TERM to the child's process group, a bounded wait, then KILL to whatever of it is left (containerd,
    shims), and the child reaped."""
    kill_group(proc, STOP_TIMEOUT_S)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass


def _remove_cgroup(path: Path) -> None:
    if not path.is_dir():
        return
    for child in sorted(path.rglob("*"), key=lambda p: -len(p.parts)):
        if child.is_dir():
            try:
                child.rmdir()
            except OSError:
                pass
    try:
        path.rmdir()
    except OSError:
        pass


def _pids_mentioning(token: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


__all__ = ["NamespaceHost", "clean_orphans"]

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Namespace hosts of the tests.")
    parser.add_argument("--clean", action="store_true", help="remove hosts whose owning process is gone")
    if parser.parse_args().clean:
        print("\n".join(clean_orphans()) or "no orphaned namespace host")
