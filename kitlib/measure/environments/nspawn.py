"""`nspawn`: a system container under systemd-nspawn. The benchmark image's root filesystem (plus
systemd) boots systemd as its PID 1, beside the LXC system container (`lxc`) of the same tree.

The root filesystem is an overlay on the tree `lxc` unpacks, mounted in a mount namespace of the
container's own (it vanishes with the container, even after a SIGKILL), so the container runs the
same binaries as Docker, LXC and the VM; the data directory is a host directory bind-mounted in.
The container joins a network namespace the kit made beforehand, whose veth has an address of its
own in a /30 routed by the host, which the peer reaches through the host's forwarding path (as
LXC's router mode). This host's PID 1 need not be systemd: nspawn runs without machined
(`--register=no --keep-unit`) in a cgroup of its own named after the machine, and commands enter
the container's namespaces with `nsenter`, pinned to the container's CPUs, with the image's
environment. `kit clean` stops machines of killed runs and removes what they left.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kitlib.core import naming, paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import kill_group, pid_alive, pinned, run_bounded, stop_pid
from kitlib.measure.environments.base import Environment
from kitlib.measure.environments.lxc import SHARED_DIR
from kitlib.measure.environments.remote import Transport
from kitlib.measure.host import commands, links
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.forwarding import ForwardRules
from kitlib.measure.vm.guest_image import ensure_system_tree
from kitlib.specs.labels import EnvSpec
from kitlib.specs.option_values import cpu_set

READY_TIMEOUT_S = 90.0
#: how long the container's systemd gets to power off before its processes are killed
STOP_TIMEOUT_S = 20.0
#: what a machine's name, network namespace and scratch folder end with (`kit clean` finds them so)
SUFFIX = "-nspawn"
#: the role letter of the host end of its veth (`naming.interface_name`)
LINK_ROLE = "n"
#: mounts the overlay root inside the mount namespace `unshare` made, then becomes systemd-nspawn
MOUNT_THEN_BOOT = 'mount -t overlay overlay -o "$1" "$2" && shift 2 && exec "$@"'
#: cgroup hierarchies a machine's cgroup is made in: the named systemd one of a hybrid host, and v2
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: how the peer reaches a machine (`kit envs`)
REACHED = "reached from the peer namespace through a routed veth"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NspawnEnvironment(Environment):
    kind = "nspawn"

    def __init__(self, *args: Any, image: str, client=None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.image = image
        self.client = client
        self.tree = None
        self.local_dir: Path | None = None
        self.name = f"{self.run_label}{SUFFIX}"
        self.veth = naming.interface_name(self.run_label, LINK_ROLE)
        self.netns: str | None = None
        self.rules: ForwardRules | None = None
        self.process: subprocess.Popen | None = None
        self.cgroups: list[Path] = []
        self.leader: int | None = None
        self.start_to_ready_s: float | None = None
        self.transport = Transport(self._enter, self._pin, SHARED_DIR)

    @property
    def boot_to_ready_s(self) -> float | None:
        """systemd-nspawn started to systemd running (the image unpacked and the veth made before)."""
        return self.start_to_ready_s

    @property
    def cpus(self) -> list[int]:
        """The container's CPUs: the `+cpus` option's, else the system under test's."""
        option = self.spec.options.get("cpus")
        return cpu_set(str(option)) if option else list(self.layout.sut_cpus)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        ok, reason = tools_status(root=os.geteuid() == 0)
        if not ok:
            raise EnvironmentUnavailable(f"{self.label}: {reason}")
        if self.client is None:
            self.client = docker_client()
        self.tree = ensure_system_tree(self.client, self.image)
        root = paths.own_scratch_root()
        self.local_dir = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir=root))
        for part in ("shared/data", "upper", "work", "root"):
            (self.local_dir / part).mkdir(parents=True)
        self._make_network()
        began = time.monotonic()
        self._boot()
        self._wait_until_booted()
        self.start_to_ready_s = round(time.monotonic() - began, 3)

    def _make_network(self) -> None:
        """A network namespace with the container's end of a veth, addressed and routed before boot."""
        subnet = links.free_subnet()
        gateway, self.address = str(subnet.network_address + 1), str(subnet.network_address + 2)
        self.netns = self.name
        inside = ["ip", "-n", self.netns]
        for argv in (
            ["ip", "netns", "add", self.netns],
            ["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.netns],
            ["ip", "addr", "add", f"{gateway}/30", "dev", self.veth],
            ["ip", "link", "set", self.veth, "up"],
            [*inside, "addr", "add", f"{self.address}/30", "dev", "eth0"],
            [*inside, "link", "set", "eth0", "up"],
            [*inside, "link", "set", "lo", "up"],
            [*inside, "route", "add", "default", "via", gateway],
        ):
            links.ip(argv, "make the system container's network")
        self.rules = ForwardRules(self.run_label, self.veth)
        self.rules.start()

    def _boot(self) -> None:
        self.cgroups = machine_cgroups(self.name)
        with open(self.local_dir / "nspawn.log", "wb") as log:
            self.process = commands.spawn(
                boot_argv(self._overlay_options(), str(self.local_dir / "root"), self._nspawn_options()),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=functools.partial(_enter_cgroups, self.cgroups),
            )

    def _overlay_options(self) -> str:
        folders = [str(self.tree.rootfs), str(self.local_dir / "upper"), str(self.local_dir / "work")]
        if any("," in folder or ":" in folder for folder in folders):
            raise EnvironmentUnavailable(f"{self.label}: an overlay cannot take a folder named with , or : {folders}")
        return "lowerdir={},upperdir={},workdir={}".format(*folders)

    def _nspawn_options(self) -> list[str]:
        options = [
            "--quiet",
            "--register=no",
            "--keep-unit",
            "--boot",
            f"--machine={self.name}",
            f"--network-namespace-path=/run/netns/{self.netns}",
            f"--bind={self.local_dir / 'shared'}:{SHARED_DIR}",
            "--link-journal=no",
            "--console=read-only",
        ]
        if self.cpus:
            options.append(f"--cpu-affinity={','.join(map(str, self.cpus))}")
        return options

    def _wait_until_booted(self) -> None:
        """Until the container's systemd has finished booting ("running", or "degraded": a unit the
        benchmarks do not need failed, as sshd without its keys does)."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        state = "no init yet"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EnvironmentUnavailable(
                    f"{self.label}: systemd-nspawn exited ({self.process.returncode}) {self._log_tail()}"
                )
            if self._leader() is not None:
                code, output = self.execute(["systemctl", "is-system-running"], timeout=10, cpus=[])
                state = output.strip().splitlines()[-1] if output.strip() else state
                if state in ("running", "degraded"):
                    return
            time.sleep(0.3)
        raise EnvironmentUnavailable(
            f"{self.label}: the container's init did not finish booting in {READY_TIMEOUT_S:.0f} s "
            f"(state: {state}) {self._log_tail()}"
        )

    def _leader(self) -> int | None:
        """The container's PID 1 as this host numbers it: nspawn's child once it runs systemd."""
        if self.leader is None and self.process is not None:
            self.leader = container_leader(self.process.pid)
        return self.leader

    def _log_tail(self) -> str:
        log = self.local_dir / "nspawn.log" if self.local_dir else None
        if log is None or not log.exists():
            return ""
        lines = _ANSI.sub("", log.read_text(errors="replace")).strip().splitlines()[-6:]
        return "; nspawn.log:\n  " + "\n  ".join(lines)

    def _teardown(self) -> None:
        if self.process is not None:
            stop_machine(self.process.pid, self.leader)
            if self.process.poll() is None:
                kill_group(self.process)
            self.process.wait(timeout=30)
            self.process = None
            self.leader = None
        remove_cgroups(self.cgroups)
        self.cgroups = []
        if self.rules is not None:
            self.rules.stop()
            self.rules = None
        if self.netns is not None:
            links.quietly(["ip", "netns", "del", self.netns])
            self.netns = None
        links.quietly(["ip", "link", "del", self.veth])
        if self.local_dir is not None:
            shutil.rmtree(self.local_dir, ignore_errors=True)
            self.local_dir = None

    # -- running things --------------------------------------------------------------------
    def _pin(self, argv: list[str], cpus: Sequence[int] | None) -> list[str]:
        """argv pinned to `cpus`, by default to the container's own."""
        return pinned(argv, self.cpus if cpus is None else cpus)

    def _enter(self, argv: list[str], timeout: float) -> tuple[int | None, str]:
        """argv run in the container's namespaces (as its PID 1 sees the world), with the image's
        environment only, on the container's CPUs."""
        leader = self._leader() if self.process is not None and self.process.poll() is None else None
        if leader is None:  # never a pid nspawn's exit may have freed for another process
            return 1, f"{self.label}: the container is not running"
        command = pinned(enter_argv(leader, self.tree.env if self.tree else []), self.cpus)
        code, output = run_bounded(
            [*command, "timeout", "--kill-after=5", f"{max(timeout, 1):.0f}", *argv], timeout=timeout + 30
        )
        return (None if code in (124, 137) else code), output

    # -- where things are ------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        version = commands.run(["systemd-nspawn", "--version"], timeout=10).output.strip().splitlines()
        info = {
            **super().describe(),
            "network": "veth in a routed /30 of its own, reached through the host's forwarding path",
            "storage": "root: overlay on the unpacked image; data: a host directory bind-mounted in",
            "nspawn_version": version[0] if version else None,
            "image": self.image,
            "system_image": self.tree.image if self.tree else None,
            "address": self.address,
            "veth": self.veth,
            "cpu_affinity": ",".join(map(str, self.cpus)) or None,
            "start_to_ready_s": self.start_to_ready_s,
        }
        if self.local_dir is not None and self._leader() is not None:
            info["init"] = self.execute(["cat", "/proc/1/comm"], timeout=30, cpus=[])[1].strip()
            info["kernel"] = self.execute(["uname", "-r"], timeout=30, cpus=[])[1].strip()
        return info


# -- the commands (pure) -----------------------------------------------------------------------
def boot_argv(overlay_options: str, root: str, nspawn_options: list[str]) -> list[str]:
    """systemd-nspawn booting `root` (an overlay mounted first) in a mount namespace of its own."""
    mount = ["unshare", "--mount", "--propagation", "private", "sh", "-c", MOUNT_THEN_BOOT, "sh"]
    return [*mount, overlay_options, root, "systemd-nspawn", f"--directory={root}", *nspawn_options]


def enter_argv(leader: int, variables: Sequence[str]) -> list[str]:
    """The prefix of a command run in the namespaces, root and working directory of `leader`, with
    `variables` (NAME=value) as its whole environment."""
    return ["nsenter", f"--target={int(leader)}", "--all", "--root", "--wd", "env", "-i", *variables]


def cgroup_dirs(self_cgroup: str, name: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """Where a machine's cgroups go, beside this process's own (/proc/self/cgroup's text): in the
    named systemd hierarchy of a hybrid host and in the v2 one, where each is mounted."""
    found = []
    for line in self_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "name=systemd" and (root / "systemd").is_dir():
            found.append(root / "systemd" / path.lstrip("/") / name)
        elif controllers == "":
            mount = root if (root / "cgroup.controllers").exists() else root / "unified"
            if (mount / "cgroup.procs").exists():
                found.append(mount / path.lstrip("/") / name)
    return found


def machine_cgroups(name: str) -> list[Path]:
    return cgroup_dirs(Path("/proc/self/cgroup").read_text(), name)


def _enter_cgroups(groups: list[Path]) -> None:
    """In the child before systemd-nspawn starts: default signal dispositions (a shell in the
    background may have handed SIGINT down ignored), and cgroups of its own, so nspawn's `payload`
    and `supervisor` groups are the machine's and not shared with another machine's."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    for group in groups:
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))


def remove_cgroups(groups: Sequence[Path]) -> None:
    """Each cgroup and the groups under it, deepest first (a cgroup goes once it holds no process)."""
    for group in groups:
        if not group.is_dir():
            continue
        for folder, _, _ in sorted(os.walk(group), key=lambda entry: -entry[0].count("/")):
            try:
                os.rmdir(folder)
            except OSError:
                pass


def container_leader(nspawn_pid: int) -> int | None:
    """The child of systemd-nspawn that runs systemd in a PID namespace of its own, if there is one yet."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            comm = (entry / "comm").read_text().strip()
            own_ns = os.readlink(entry / "ns" / "pid") != os.readlink(f"/proc/{nspawn_pid}/ns/pid")
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == nspawn_pid and comm == "systemd" and own_ns:
            return int(entry.name)
    return None


def stop_machine(nspawn_pid: int, leader: int | None) -> None:
    """Power the machine off (nspawn passes SIGTERM to its init as a shutdown request), bounded;
    SIGKILL its init if it is still there then."""
    stop_pid(nspawn_pid, STOP_TIMEOUT_S, then_kill=[leader] if leader is not None else [])


# -- availability ----------------------------------------------------------------------------
def tools_status(*, root: bool) -> tuple[bool, str]:
    """Whether this host has what a machine needs besides the benchmark image."""
    return requirements(
        root=root,
        tools={name: shutil.which(name) is not None for name in ("systemd-nspawn", "nsenter", "unshare", "ip")},
        overlay=_overlay_supported(),
        docker_reason=None,
    )


def requirements(*, root: bool, tools: dict[str, bool], overlay: bool, docker_reason: str | None) -> tuple[bool, str]:
    """The verdict of `status` from the facts gathered (pure, so every branch is testable)."""
    if not tools.get("systemd-nspawn"):
        return False, "systemd-nspawn is not installed (apt-get install systemd-container)"
    if not tools.get("nsenter") or not tools.get("unshare"):
        return False, "nsenter and unshare are missing (apt-get install util-linux)"
    if not tools.get("ip"):
        return False, "ip is missing (apt-get install iproute2): the container's veth is made with it"
    if not root:
        return False, "needs root (systemd-nspawn, and a routed veth the peer reaches)"
    if not overlay:
        return False, "the kernel has no overlay filesystem (modprobe overlay): the root is an overlay"
    if docker_reason is not None:
        return False, f"its root filesystem is unpacked from the benchmark image: {docker_reason}"
    return True, f"systemd-nspawn system container (systemd as init), {REACHED}"


def _overlay_supported() -> bool:
    try:
        return "\toverlay\n" in Path("/proc/filesystems").read_text()
    except OSError:
        return False


def status(spec: EnvSpec) -> tuple[bool, str]:
    """(available, reason) of an `nspawn` label on this host; each "no" names what to install or change."""
    ok, reason = tools_status(root=os.geteuid() == 0)
    if not ok:
        return ok, reason
    try:
        docker = docker_client().version().get("Version")
    except EnvironmentUnavailable as exc:
        return False, f"its root filesystem is unpacked from the benchmark image: {exc}"
    version = commands.run(["systemd-nspawn", "--version"], timeout=10).output.strip().splitlines()
    shown = version[0] if version else "systemd-nspawn"
    return True, f"{shown}: system container (systemd as init) of the image from Docker {docker}, {REACHED}"


# -- what killed runs left ---------------------------------------------------------------------
def _orphaned(name: str) -> bool:
    pid = naming.owner_pid(name)
    return pid is not None and not pid_alive(pid)


def orphaned_machines() -> list[tuple[int, str]]:
    """(pid of systemd-nspawn, machine name) of machines whose run is gone."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if not argv or not argv[0].endswith("systemd-nspawn"):
            continue
        name = next((a.removeprefix("--machine=") for a in argv if a.startswith("--machine=")), "")
        if name.endswith(SUFFIX) and _orphaned(name):
            found.append((int(entry.name), name))
    return found


def clean_leftovers() -> list[str]:
    """Machines of dead runs stopped and their cgroups removed (their network namespaces, veths,
    FORWARD rules and scratch folders go with every run's, in `kitlib.measure.cleanup`, after this)."""
    if os.geteuid() != 0:
        return []
    removed = []
    for pid, name in orphaned_machines():
        stop_machine(pid, container_leader(pid))
        removed.append(f"nspawn machine {name}")
    groups = [group.parent for group in machine_cgroups("x")]
    for parent in groups:
        for group in parent.glob(f"*{SUFFIX}") if parent.is_dir() else []:
            if _orphaned(group.name):
                _empty_cgroup(group)
                remove_cgroups([group])
                if not group.exists():
                    removed.append(f"cgroup {group}")
    return removed


def _empty_cgroup(group: Path, timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGKILL what is left in a machine's cgroup (a machine whose nspawn was killed dies on its own,
    a moment later), until the cgroup is empty or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = {int(pid) for procs in group.rglob("cgroup.procs") for pid in _read_lines(procs)}
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []
