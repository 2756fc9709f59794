"""Podman on this host: who runs it (root, or the unprivileged user `kitbench` for rootless), the
Docker-compatible API service an environment talks to, the benchmark image copied in from Docker,
and what a killed run left of all this.

The service runs under `catatonit` acting as subreaper: conmon, slirp4netns and the containers'
processes stay descendants of the run (counted as its own by the interference sampler, stopped
with it), instead of being handed to PID 1. API `exec` sessions keep their conmon for five
minutes after the command ends; stopping the service stops them with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import signal
import struct
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core import naming
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import OWNER_VARIABLE, child_env, run_bounded, run_bounded_apart, wait_exited

#: the unprivileged user rootless Podman runs as (created when missing, with subordinate ids)
ROOTLESS_USER = "kitbench"
#: where the root service's sockets go; a rootless user's go to its own runtime folder
ROOT_RUNTIME = Path("/run/kit-podman")
SUBID_COUNT = 65536
SUBID_FLOOR = 100_000
#: seconds the service may take to answer on its socket, and to stop
SERVICE_READY_S = 30.0
SERVICE_STOP_S = 10.0
#: seconds for copying the benchmark image from Docker into Podman's storage
IMAGE_COPY_S = 900.0
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
TUN = "/dev/net/tun"


@dataclass(frozen=True)
class Identity:
    """Whose Podman: root's, or the rootless user's (its own storage, runtime folder and user namespace)."""

    rootless: bool
    uid: int = 0
    gid: int = 0
    home: str = "/root"
    runtime_dir: str = str(ROOT_RUNTIME)

    @property
    def user(self) -> str:
        return ROOTLESS_USER if self.rootless else "root"


ROOT = Identity(rootless=False)


def as_identity(identity: Identity, argv: Sequence[str]) -> list[str]:
    """argv run as `identity`: for the rootless user with its own environment only (HOME,
    XDG_RUNTIME_DIR), marked as this run's, so nothing of root's environment leaks in, and in its home:
    root's working directory may be one it cannot enter (a clone in `mktemp -d`, mode 0700), and
    Podman refuses to start there."""
    if not identity.rootless:
        return list(argv)
    return [
        "setpriv",
        f"--reuid={identity.uid}",
        f"--regid={identity.gid}",
        "--init-groups",
        "env",
        "-i",
        f"--chdir={identity.home}",
        f"HOME={identity.home}",
        f"USER={identity.user}",
        f"LOGNAME={identity.user}",
        f"XDG_RUNTIME_DIR={identity.runtime_dir}",
        f"PATH={PATH}",
        f"{OWNER_VARIABLE}={os.getpid()}",
        *argv,
    ]


def podman(identity: Identity, args: Sequence[str], *, timeout: float = 120.0) -> tuple[int | None, str]:
    """(returncode, output) of the podman CLI as `identity`, bounded by `timeout`."""
    return run_bounded(as_identity(identity, ["podman", *args]), timeout=timeout)


def podman_stdout(identity: Identity, args: Sequence[str], *, timeout: float = 120.0) -> tuple[int | None, str]:
    """(returncode, stdout alone) of the podman CLI as `identity`: rootless Podman warns on stderr
    (a root not mounted shared), which must not mix with a listing."""
    for _ in range(LISTING_ATTEMPTS):
        code, output, errors = run_bounded_apart(as_identity(identity, ["podman", *args]), timeout=timeout)
        if code == 0 or NETNS_NOT_YET_MOUNTED not in errors:
            break
        time.sleep(0.5)  # a container being created right now: its namespace file is mounted a moment later
    return code, output if code == 0 else output + errors


#: rootless Podman's error on a container whose network namespace file exists but is not yet mounted
#: (listed while it is being created): asking again a moment later answers
NETNS_NOT_YET_MOUNTED = "unknown FS magic on"
LISTING_ATTEMPTS = 10


# -- the rootless user ------------------------------------------------------------------------
def rootless_identity(create: bool = True) -> Identity | None:
    """The rootless user's identity, prepared for Podman (created first with `create`), or None."""
    try:
        entry = pwd.getpwnam(ROOTLESS_USER)
    except KeyError:
        if not create:
            return None
        _create_user()
        entry = pwd.getpwnam(ROOTLESS_USER)
    identity = Identity(True, entry.pw_uid, entry.pw_gid, entry.pw_dir, f"/run/kit-podman-{entry.pw_uid}")
    if create:
        _prepare(identity)
    return identity


def _create_user() -> None:
    code, output = run_bounded(
        ["useradd", "--create-home", "--shell", "/usr/sbin/nologin", "--comment", "kitlib rootless Podman"]
        + [ROOTLESS_USER],
        timeout=60,
    )
    if code != 0:
        raise EnvironmentUnavailable(f"could not create user {ROOTLESS_USER} for rootless Podman: {output.strip()}")


def free_subid_start(text: str, floor: int = SUBID_FLOOR, count: int = SUBID_COUNT) -> int:
    """The first start of `count` subordinate ids above every range of /etc/subuid (or subgid) `text`."""
    end = floor
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            end = max(end, int(parts[1]) + int(parts[2]))
    return end


def has_subids(text: str, user: str, uid: int) -> bool:
    """Whether /etc/subuid (or subgid) `text` gives `user` (by name or uid) a range of at least 65536."""
    for line in text.splitlines():
        parts = line.strip().split(":")
        if len(parts) == 3 and parts[0] in (user, str(uid)) and parts[2].isdigit() and int(parts[2]) >= SUBID_COUNT:
            return True
    return False


def _prepare(identity: Identity) -> None:
    """Subordinate ids, the runtime folder, storage on native overlay and /dev/net/tun for slirp4netns."""
    for kind, flag in (("subuid", "--add-subuids"), ("subgid", "--add-subgids")):
        path = Path(f"/etc/{kind}")
        text = path.read_text() if path.exists() else ""
        if not has_subids(text, identity.user, identity.uid):
            start = free_subid_start(text)
            code, output = run_bounded(
                ["usermod", flag, f"{start}-{start + SUBID_COUNT - 1}", identity.user], timeout=60
            )
            if code != 0:
                raise EnvironmentUnavailable(f"could not give {identity.user} {kind} ids: {output.strip()}")
    runtime = Path(identity.runtime_dir)
    runtime.mkdir(mode=0o700, exist_ok=True)
    os.chown(runtime, identity.uid, identity.gid)
    _storage_config(identity)
    grant_tun(identity.uid)


def _storage_config(identity: Identity) -> None:
    """Overlay storage, as root's: without a setting, Podman 4.3 picks vfs for a user whose /dev/fuse is
    closed (a full copy of the image per container), though the kernel mounts overlay in a user namespace."""
    folder = Path(identity.home) / ".config" / "containers"
    config = folder / "storage.conf"
    if config.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    config.write_text('[storage]\ndriver = "overlay"\n')
    for path in (folder.parent, folder, config):
        os.chown(path, identity.uid, identity.gid)


#: POSIX ACL entry tags (the kernel's xattr format, <linux/posix_acl_xattr.h>)
ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
ACL_UNDEFINED_ID = 0xFFFFFFFF
ACL_XATTR = "system.posix_acl_access"
AclEntry = tuple[int, int, int]  # tag, permission bits (rwx), qualifier (uid or gid)


def parse_acl(blob: bytes) -> list[AclEntry]:
    """The entries of an access ACL as the kernel stores it (version 2, then 8 bytes an entry)."""
    if len(blob) < 4 or struct.unpack_from("<I", blob)[0] != 2:
        return []
    return [struct.unpack_from("<HHI", blob, 4 + 8 * i) for i in range((len(blob) - 4) // 8)]


def acl_with_user(current: bytes, mode: int, uid: int, perm: int = 6) -> bytes:
    """The ACL `current` (or, where the file has none, the one its `mode` means) with `uid` given `perm`,
    every other entry kept, and the mask recomputed over the group class, as `setfacl -m u:uid:rw`
    adds an entry: the owner, group and other users keep the access they had."""
    entries = parse_acl(current) or [
        (ACL_USER_OBJ, (mode >> 6) & 7, ACL_UNDEFINED_ID),
        (ACL_GROUP_OBJ, (mode >> 3) & 7, ACL_UNDEFINED_ID),
        (ACL_OTHER, mode & 7, ACL_UNDEFINED_ID),
    ]
    kept = [e for e in entries if e[0] != ACL_MASK and not (e[0] == ACL_USER and e[2] == uid)]
    kept.append((ACL_USER, perm, uid))
    mask = 0
    for tag, bits, _ in kept:
        if tag in (ACL_USER, ACL_GROUP_OBJ, ACL_GROUP):
            mask |= bits
    kept.append((ACL_MASK, mask, ACL_UNDEFINED_ID))
    kept.sort(key=lambda e: (e[0], e[2]))  # the kernel takes the entries in this order only
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in kept)


def grant_tun(uid: int, path: str = TUN) -> None:
    """Let the rootless user open /dev/net/tun (slirp4netns' tap) where it is root's alone (mode 600
    without udev): an ACL entry for that user added to the device's ACL (never one that replaces it),
    not the whole world."""
    if not os.path.exists(path) or os.stat(path).st_mode & 0o006 == 0o006:
        return
    try:
        current = os.getxattr(path, ACL_XATTR)
    except OSError:
        current = b""
    entries = parse_acl(current)
    mask = next((bits for tag, bits, _ in entries if tag == ACL_MASK), 7)
    if any(e[0] == ACL_USER and e[2] == uid and e[1] & mask & 6 == 6 for e in entries):
        return
    try:
        os.setxattr(path, ACL_XATTR, acl_with_user(current, os.stat(path).st_mode, uid))
    except OSError as exc:
        raise EnvironmentUnavailable(
            f"{path} is closed to {ROOTLESS_USER} and takes no ACL ({exc}): chmod 0666 {path}"
        ) from exc


# -- the API service --------------------------------------------------------------------------
@dataclass
class PodmanService:
    """`podman system service` on a socket of its own, for one identity, shared by the environments
    of this process (a startup point's fresh container reuses the running service, as Docker's does)."""

    identity: Identity
    socket: str
    proc: subprocess.Popen | None = None
    users: int = 0
    log: Path | None = None
    limits: dict[str, int] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> None:
        Path(self.socket).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        Path(self.socket).unlink(missing_ok=True)
        self.log = Path(self.socket).with_suffix(".log")
        argv = ["catatonit", "--", "podman", "system", "service", "--time=0", self.base_url]
        with open(self.log, "wb") as log:
            if self.identity.rootless:
                os.chown(self.log, self.identity.uid, self.identity.gid)
            self.proc = subprocess.Popen(
                as_identity(self.identity, argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=child_env(),
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.limits = service_limits(self.service_pid())

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + SERVICE_READY_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EnvironmentUnavailable(f"podman system service exited: {self.log_tail()}")
            if os.path.exists(self.socket) and _answers(self.socket):
                return
            time.sleep(0.1)
        raise EnvironmentUnavailable(f"podman system service did not answer within {SERVICE_READY_S:.0f} s")

    def log_tail(self) -> str:
        try:
            return " | ".join(self.log.read_text(errors="replace").strip().splitlines()[-5:])
        except (OSError, AttributeError):
            return ""

    def service_pid(self) -> int | None:
        """The podman process itself (catatonit's child)."""
        if self.proc is None:
            return None
        children = [pid for pid, ppid in _parents().items() if ppid == self.proc.pid]
        return children[0] if children else None

    def stop(self) -> None:
        """The subreaper's other descendants (exec sessions' conmon, the cleanup commands they start),
        then the service, then the subreaper; bounded, nothing left."""
        if self.proc is None:
            return
        service = self.service_pid()
        for pid in descendants(self.proc.pid):
            if pid != service:
                _kill(pid, signal.SIGKILL)
        if service is not None:
            _kill(service, signal.SIGTERM)
        try:
            self.proc.wait(timeout=SERVICE_STOP_S)
        except subprocess.TimeoutExpired:
            for pid in descendants(self.proc.pid):
                _kill(pid, signal.SIGKILL)
            _kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=SERVICE_STOP_S)
        self.proc = None
        Path(self.socket).unlink(missing_ok=True)
        if self.log is not None:
            self.log.unlink(missing_ok=True)
        if self.identity.rootless:
            stop_pause_process(self.identity, os.getpid())


def _answers(socket: str) -> bool:
    import socket as sockets

    with sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM) as conn:
        conn.settimeout(2)
        try:
            conn.connect(socket)
            conn.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
            return b"OK" in conn.recv(1024)
        except OSError:
            return False


def socket_path(identity: Identity, run_label: str) -> str:
    """The service's socket: named after the run (its owner pid finds it when the run is dead)."""
    tag = hashlib.sha1(identity.user.encode()).hexdigest()[:6]
    return f"{identity.runtime_dir}/{run_label}-{tag}.sock"


_SERVICES: dict[bool, PodmanService] = {}
_LOCK = threading.Lock()


def acquire(identity: Identity, run_label: str) -> PodmanService:
    """This process's service for `identity`, started on first use."""
    with _LOCK:
        service = _SERVICES.get(identity.rootless)
        if service is None or service.proc is None or service.proc.poll() is not None:
            service = PodmanService(identity, socket_path(identity, run_label))
            service.start()
            _SERVICES[identity.rootless] = service
        service.users += 1
        return service


def release(service: PodmanService) -> None:
    """One user fewer; the last one stops the service."""
    with _LOCK:
        service.users -= 1
        if service.users <= 0:
            service.stop()
            if _SERVICES.get(service.identity.rootless) is service:
                del _SERVICES[service.identity.rootless]


# -- processes --------------------------------------------------------------------------------
def _parents() -> dict[int, int]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def descendants(root: int) -> list[int]:
    """Every process below `root` (children before grandchildren)."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def service_limits(pid: int | None) -> dict[str, int]:
    """The service's hard limits of open files and processes: a container asking for more (Podman's
    default as root) fails in crun's setrlimit where the host's hard limits are lower."""
    limits = {"nofile": 1024, "nproc": 4096}
    try:
        text = Path(f"/proc/{pid}/limits").read_text()
    except (OSError, TypeError):
        return limits
    return parse_limits(text) or limits


def parse_limits(text: str) -> dict[str, int]:
    """{"nofile": hard, "nproc": hard} from /proc/PID/limits (unlimited: left out)."""
    names = {"Max open files": "nofile", "Max processes": "nproc"}
    found = {}
    for line in text.splitlines():
        for title, name in names.items():
            if line.startswith(title):
                hard = line[len(title) :].split()[1]
                if hard.isdigit():
                    found[name] = int(hard)
    return found


def processes() -> Iterator[tuple[int, int, str, list[str], bytes]]:
    """(pid, uid, comm, argv, environ) of every readable process that has not exited."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("State", "").strip().startswith("Z"):
            continue
        uid = int(fields.get("Uid", "0").split()[0])
        words = [a.decode(errors="replace") for a in argv if a]
        yield int(entry.name), uid, fields.get("Name", "").strip(), words, environ


def marked_by(environ: bytes, owner: int) -> bool:
    return f"{OWNER_VARIABLE}={owner}".encode() in environ.split(b"\0")


def stop_pause_process(identity: Identity, owner: int) -> None:
    """The user namespace's pause process (`catatonit -P`) started by run `owner`: Podman leaves it
    running after its last command."""
    for pid, uid, comm, argv, environ in processes():
        if uid == identity.uid and comm == "catatonit" and "-P" in argv and marked_by(environ, owner):
            _kill(pid, signal.SIGKILL)
            wait_exited(pid, 5.0)


def owner_of_process(argv: list[str], environ: bytes) -> int | None:
    """The run a Podman helper process belongs to: by the container name conmon carries (`-n NAME`),
    by the service's socket name, else by its KITLIB_OWNER mark."""
    if "-n" in argv[:-1]:
        owner = naming.owner_pid(argv[argv.index("-n") + 1])
        if owner is not None:
            return owner
    for arg in argv:
        if arg.startswith("unix://"):
            owner = naming.owner_pid(Path(arg).name)
            if owner is not None:
                return owner
    mark = f"{OWNER_VARIABLE}=".encode()
    value = next((v[len(mark) :] for v in environ.split(b"\0") if v.startswith(mark)), b"")
    return int(value) if value.isdigit() else None


HELPERS = ("catatonit", "podman", "conmon", "slirp4netns", "rootlessport", "rootlessport-ch")


def helper_processes(uid: int | None = None) -> list[tuple[int, int, str, int | None]]:
    """(pid, uid, comm, owning run) of Podman's helper processes (of `uid` only if given)."""
    found = []
    for pid, owner_uid, comm, argv, environ in processes():
        if comm in HELPERS and (uid is None or owner_uid == uid):
            found.append((pid, owner_uid, comm, owner_of_process(argv, environ)))
    return found


# -- the benchmark image ----------------------------------------------------------------------
def ensure_image(identity: Identity, docker, image: str) -> str:
    """The Docker image `image` in `identity`'s Podman storage (copied with docker save | podman load
    when its id is missing there); returns its id. Checked once per process: a fresh container's start
    (the startup experiment) times the container, not this check."""
    key = (identity.rootless, image)
    if key not in _IMAGES:
        _IMAGES[key] = _ensure_image(identity, docker, image)
    return _IMAGES[key]


_IMAGES: dict[tuple[bool, str], str] = {}


def _ensure_image(identity: Identity, docker, image: str) -> str:
    try:
        image_id = docker.images.get(image).id
    except Exception as exc:  # noqa: BLE001 - no such image, engine gone
        raise EnvironmentUnavailable(f"the benchmark image {image} is not in Docker: {exc}") from exc
    code, _ = podman(identity, ["image", "exists", image_id], timeout=60)
    if code == 0:
        _tag(identity, image_id, image)
        return image_id
    _copy(identity, docker, image)
    code, output = podman(identity, ["image", "exists", image_id], timeout=60)
    if code != 0:
        raise EnvironmentUnavailable(f"{image} loaded into Podman ({identity.user}) under another id: {output}")
    _tag(identity, image_id, image)
    return image_id


def _tag(identity: Identity, image_id: str, image: str) -> None:
    """The Docker name on that id, so the name resolves to the same image in both engines."""
    podman(identity, ["tag", image_id, image], timeout=60)


def _copy(identity: Identity, docker, image: str) -> None:
    deadline = time.monotonic() + IMAGE_COPY_S
    load = subprocess.Popen(
        as_identity(identity, ["podman", "load", "--quiet"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=child_env(),
    )
    try:
        for chunk in docker.images.get(image).save(chunk_size=1 << 20):
            load.stdin.write(chunk)
            if time.monotonic() > deadline:
                raise EnvironmentUnavailable(f"copying {image} into Podman took over {IMAGE_COPY_S:.0f} s")
        # communicate() flushes and closes stdin itself: closing it first makes its flush raise ValueError
        output, _ = load.communicate(timeout=max(1.0, deadline - time.monotonic()))
    except BaseException:
        load.kill()
        load.wait(timeout=30)
        raise
    if load.returncode != 0:
        raise EnvironmentUnavailable(f"podman load ({identity.user}) failed: {output.decode(errors='replace')}")


# -- facts --------------------------------------------------------------------------------------
def info(identity: Identity) -> dict[str, Any]:
    """`podman info` as `identity`, or {} where it fails."""
    code, output = podman_stdout(identity, ["info", "--format", "json"], timeout=60)
    if code != 0:
        return {}
    try:
        return json.loads(output[output.index("{") :])
    except ValueError:
        return {}


def facts(data: dict[str, Any]) -> dict[str, Any]:
    """The provenance of one Podman from its `podman info`."""
    host, store = data.get("host", {}), data.get("store", {})
    runtime = host.get("ociRuntime", {})
    slirp = host.get("slirp4netns", {})
    return {
        "podman_version": data.get("version", {}).get("Version"),
        "rootless": host.get("security", {}).get("rootless"),
        "network_backend": host.get("networkBackend"),
        "slirp4netns_version": first_line(slirp.get("version", "")) or None,
        "storage_driver": store.get("graphDriverName"),
        "storage_status": store.get("graphStatus"),
        "oci_runtime": runtime.get("name"),
        "oci_runtime_version": first_line(runtime.get("version", "")) or None,
        "cgroup_manager": host.get("cgroupManager"),
        "cgroup_version": host.get("cgroupVersion"),
        "kernel": host.get("kernel"),
    }


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def parse_version(text: str) -> tuple[int, ...] | None:
    """(4, 3, 1) from `podman version 4.3.1` (or a bare `4.3.1`), None where there is none."""
    match = re.search(r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?", text)
    return tuple(int(g or 0) for g in match.groups()) if match else None
