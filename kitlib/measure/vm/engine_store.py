"""A Docker data root that already holds the benchmark image, as a disk for a guest's Docker engine.

`docker load` of the benchmark image inside a software-emulated guest takes a quarter of an hour
or more (every layer is unpacked and hashed by emulated instructions), longer still on a loaded
machine. Instead a private Docker engine on the host, at native speed, loads the image into a data
root on an ext4 disk image, once per image id; each guest gets a copy-on-write overlay of that disk
as /var/lib/docker, so its engine starts with the image present and writes nothing back.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import commands, links
from kitlib.measure.image import build_lock

ENGINE_START_S = 60
LOAD_TIMEOUT_S = 900
KEEP_STORES = 2
#: room beyond the loaded image for what containers write (overlay upper layers, /data): the seed 003
#: fio preset's 1 GiB test file needs 1.1 GiB; the file is sparse, so room costs nothing until used
FREE_MIB = 4096


def ensure_engine_store(client, tag: str, *, notify=print) -> Path:
    """An ext4 image holding a Docker data root (overlay2) with `tag` loaded, cached by image id."""

    image = client.images.get(tag)
    folder = paths.cache_root() / "engine-stores"
    store = folder / f"{image.id.split(':')[-1][:16]}-free{FREE_MIB}.ext4"
    with build_lock():
        if not store.exists():
            notify(f"loading {tag} into a Docker data root for guests (once per image; a minute or two) …")
            folder.mkdir(parents=True, exist_ok=True)
            size_mib = int((image.attrs.get("Size") or 0) * 2.5 / 2**20) + FREE_MIB
            partial = store.with_suffix(".partial")
            partial.unlink(missing_ok=True)
            commands.checked(["truncate", "-s", f"{size_mib}M", str(partial)], timeout=60)
            commands.checked(["mkfs.ext4", "-q", "-F", "-L", "kitdocker", str(partial)], timeout=120)
            with _mounted(partial) as root:
                _load_with_private_engine(tag, root)
            partial.rename(store)
            for old in sorted(folder.glob("*.ext4"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP_STORES:]:
                old.unlink()
    return store


def overlay(store: Path, folder: Path) -> Path:
    """A qcow2 overlay on `store` in `folder`: the guest writes there, the cached store stays as it is."""
    target = folder / "docker-store.qcow2"
    commands.checked(
        ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(store), str(target)], timeout=60
    )
    return target


@contextlib.contextmanager
def _mounted(image: Path):
    mount = Path(tempfile.mkdtemp(prefix="kitlib-store-", dir=image.parent))
    commands.checked(["mount", "-o", "loop", str(image), str(mount)], timeout=60)
    try:
        yield mount
    finally:
        commands.run(["umount", str(mount)])
        mount.rmdir()


def _load_with_private_engine(tag: str, data_root: Path) -> None:
    """Load `tag` from the machine's engine into a private one on `data_root`."""
    with private_engine(data_root) as (host, _daemon):
        save = commands.spawn(["docker", "save", tag], stdout=subprocess.PIPE)
        began = time.monotonic()
        try:
            loaded = subprocess.run(
                ["docker", "-H", host, "load", "-q"],
                stdin=save.stdout,
                capture_output=True,
                text=True,
                timeout=LOAD_TIMEOUT_S,
                check=False,
            )
        finally:
            save.stdout.close()
            save.wait(timeout=60)
        commands.note(["docker", "-H", host, "load", "-q"], loaded.returncode, time.monotonic() - began)
        if loaded.returncode != 0 or save.returncode != 0:
            raise EnvironmentUnavailable(f"loading {tag} into the guests' data root failed: {loaded.stderr[-1500:]}")


@contextlib.contextmanager
def private_engine(data_root: Path):
    """A dockerd of our own on `data_root`, yielding its DOCKER_HOST; stopped and removed on leaving.

    It has its own socket, exec root, pid file and a bridge of its own with no iptables rules: the
    machine's engine and its docker0 are never touched (a dockerd started with --bridge=none deletes
    the docker0 link of the machine's engine)."""
    short = Path(tempfile.mkdtemp(prefix="kd", dir="/tmp"))  # unix socket paths must stay short
    host = f"unix://{short}/d.sock"
    bridge = f"kdb{os.getpid()}"
    commands.checked(["ip", "link", "add", bridge, "type", "bridge"], timeout=30)
    argv = [
        "dockerd",
        f"--data-root={data_root}",
        f"--exec-root={short}/x",
        f"-H={host}",
        f"--pidfile={short}/d.pid",
        f"--bridge={bridge}",
        "--iptables=false",
        "--ip-masq=false",
        "--storage-driver=overlay2",
    ]
    daemon = None
    try:
        commands.checked(
            ["ip", "addr", "add", f"198.18.{os.getpid() % 250}.1/24", "dev", bridge], timeout=30
        )  # RFC 2544 range
        with open(short / "dockerd.log", "wb") as log:
            daemon = commands.spawn(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + ENGINE_START_S
        while not commands.run(["docker", "-H", host, "version"], timeout=30).ok:
            if daemon.poll() is not None or time.monotonic() > deadline:
                tail = (short / "dockerd.log").read_text(errors="replace")[-1500:]
                raise EnvironmentUnavailable(f"a private Docker engine did not start: {tail}")
            time.sleep(0.5)
        yield host, daemon
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait(timeout=30)
        _unmount_under(short)
        links.quietly(["ip", "link", "del", bridge])
        shutil.rmtree(short, ignore_errors=True)


def _unmount_under(folder: Path) -> None:
    """Unmount what a stopped dockerd left mounted below its exec root (its netns file), deepest first."""
    prefix = f"{folder}/"
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounts if m.startswith(prefix)), key=len, reverse=True):
        commands.run(["umount", "-l", point])
