"""The VM guest: the benchmark image plus a kernel, init and sshd, turned into a bootable disk.

The guest runs the same binaries as the containers because its root filesystem *is* the benchmark
image (one more layer: Debian's cloud kernel, systemd, udev, openssh-server and the seed unit).
`docker export` of that image becomes an ext4 disk (`mkfs.ext4 -d`, no mount needed); kernel and
initrd are copied out for QEMU's direct kernel boot. All of it is cached by the image's digest.
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import commands
from kitlib.measure.image import build_lock, ensure_derived

REPOSITORY = "kitlib/vm-guest"
#: free space in the guest's root filesystem beyond what the image fills (the disk file is sparse)
DEFAULT_HEADROOM_MIB = 6144
#: guest disks kept in the cache (newest first); older ones are removed when a new one is made
KEEP_DISKS = 2

#: applies the per-VM seed disk (label KITSEED): SSH keys and the network address, before sshd starts
SEED_SCRIPT = """#!/bin/sh
set -eu
mkdir -p /run/kit-seed
mount -o ro /dev/vdb /run/kit-seed
install -d -m 700 /root/.ssh
install -m 600 /run/kit-seed/authorized_keys /root/.ssh/authorized_keys
install -m 600 /run/kit-seed/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key
install -m 644 /run/kit-seed/ssh_host_ed25519_key.pub /etc/ssh/ssh_host_ed25519_key.pub
. /run/kit-seed/network
umount /run/kit-seed
modprobe virtio_net 2>/dev/null || true
udevadm settle --timeout=30 || true
dev=""
for i in $(seq 300); do
  for path in /sys/class/net/*; do
    [ "$(cat "$path/address")" = "$MAC" ] && dev="${path##*/}"
  done
  [ -n "$dev" ] && break
  sleep 0.1
done
[ -n "$dev" ] || { echo "kit-seed: no NIC with MAC $MAC" >&2; exit 1; }
ip link set lo up
ip link set "$dev" up
ip addr add "$ADDRESS" dev "$dev"
ip route add default via "$GATEWAY"
"""

SEED_UNIT = """[Unit]
Description=kit seed: this VM's SSH keys and address
Requires=dev-vdb.device
After=dev-vdb.device
Before=ssh.service network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/kit-seed

[Install]
WantedBy=multi-user.target
"""

SSHD_CONFIG = "HostKey /etc/ssh/ssh_host_ed25519_key\nPermitRootLogin prohibit-password\nUseDNS no\n"


def _write_file(path: str, text: str, mode: str) -> str:
    encoded = base64.b64encode(text.encode()).decode()
    path = shlex.quote(path)
    return f"echo {encoded} | base64 -d > {path} && chmod {shlex.quote(mode)} {path}"


GUEST_STEPS = [
    "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
    "linux-image-cloud-amd64 systemd-sysv udev kmod openssh-server docker.io iptables apparmor "
    "&& apt-get clean && rm -rf /var/lib/apt/lists/*",
    " && ".join(
        [
            _write_file("/usr/local/sbin/kit-seed", SEED_SCRIPT, "755"),
            _write_file("/etc/systemd/system/kit-seed.service", SEED_UNIT, "644"),
            _write_file("/etc/ssh/sshd_config.d/kit.conf", SSHD_CONFIG, "644"),
            "ln -sf /etc/systemd/system/kit-seed.service /etc/systemd/system/multi-user.target.wants/",
            "rm -f /etc/ssh/ssh_host_*",
            # the experiments start their own servers on their own ports: no stock ones at boot
            "systemctl mask redis-server.service mariadb.service mariadb.socket",
            # Docker inside the guest only when a docker-in-VM environment starts it, reachable
            # on the guest's loopback (the kit tunnels to it over the pinned SSH connection)
            "systemctl disable docker.service docker.socket containerd.service",
            "echo 'DOCKER_OPTS=\"-H tcp://127.0.0.1:2375\"' > /etc/default/docker",
            "echo kitvm > /etc/hostname",
            "printf '127.0.0.1 localhost\\n127.0.1.1 kitvm\\n' > /etc/hosts",
        ]
    ),
]


@dataclass(frozen=True)
class GuestArtifacts:
    """A bootable guest: disk (raw ext4, the root filesystem), kernel, initrd, and the image's facts."""

    directory: Path
    image: str
    image_id: str
    env: list[str]

    @property
    def disk(self) -> Path:
        return self.directory / "disk.raw"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def kernel_release(self) -> str:
        return (self.directory / "kernel-release").read_text().strip()


def ensure_guest(client, bench_image: str, *, headroom_mib: int = DEFAULT_HEADROOM_MIB, notify=print) -> GuestArtifacts:
    """The guest built from `bench_image`, building (and caching) it when missing."""

    for tool in ("mkfs.ext4", "tar"):
        if shutil.which(tool) is None:
            raise EnvironmentUnavailable(f"building the VM disk needs {tool} (apt-get install e2fsprogs tar)")
    tag = ensure_derived(client, bench_image, GUEST_STEPS, REPOSITORY, notify=notify)
    image = client.images.get(tag)
    digest = image.id.split(":")[-1][:16]
    root = paths.cache_root() / "vm" / f"{digest}-{headroom_mib}"
    with build_lock():
        if not (root / "disk.raw").exists():
            notify(f"making the VM disk from {tag} (docker export + mkfs.ext4; a minute or two) …")
            _make_disk(client, tag, root, headroom_mib)
            _prune(root.parent, keep=KEEP_DISKS)
    env = (image.attrs.get("Config") or {}).get("Env") or []
    return GuestArtifacts(root, tag, image.id, list(env))


def ensure_image_archive(client, tag: str, *, notify=print) -> Path:
    """`docker save` of `tag`, cached by image id: attached to a guest as a read-only disk, it is
    loaded by the guest's own Docker engine without crossing the network."""
    image = client.images.get(tag)
    folder = paths.cache_root() / "images"
    archive = folder / f"{image.id.split(':')[-1][:16]}.tar"
    with build_lock():
        if not archive.exists():
            notify(f"saving {tag} for loading inside VMs …")
            folder.mkdir(parents=True, exist_ok=True)
            partial = archive.with_suffix(".partial")
            with open(partial, "wb") as handle:
                for chunk in image.save(named=True):
                    handle.write(chunk)
            partial.rename(archive)
            for old in sorted(folder.glob("*.tar"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP_DISKS:]:
                old.unlink()
    return archive


@dataclass(frozen=True)
class SystemTree:
    """The guest's root filesystem as a directory, for a system container that boots its own init."""

    rootfs: Path
    image: str
    image_id: str
    env: list[str]


def ensure_system_tree(client, bench_image: str, *, notify=print) -> SystemTree:
    """The guest image (benchmark image + systemd) unpacked once per image, with the VM-only seed
    unit masked: a system container gets its address from LXC, and commands through lxc-attach."""

    tag = ensure_derived(client, bench_image, GUEST_STEPS, REPOSITORY, notify=notify)
    image = client.images.get(tag)
    root = paths.cache_root() / "lxc" / image.id.split(":")[-1][:16]
    with build_lock():
        if not (root / "rootfs" / "etc").exists():
            notify(f"unpacking {tag} as a system container's root filesystem …")
            root.parent.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".building-", dir=root.parent))
            try:
                export_tree(client, tag, work / "rootfs")
                unit = work / "rootfs" / "etc/systemd/system/kit-seed.service"
                unit.unlink()
                unit.symlink_to("/dev/null")
                (work / "rootfs" / "etc/systemd/system/multi-user.target.wants/kit-seed.service").unlink()
                if root.exists():
                    shutil.rmtree(root)
                work.rename(root)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            _prune(root.parent, keep=KEEP_DISKS, marker="rootfs/etc")
    env = (image.attrs.get("Config") or {}).get("Env") or []
    return SystemTree(root / "rootfs", tag, image.id, list(env))


def cached_kernels() -> list[Path]:
    """Guest kernels already built on this host (for the KVM probe), newest first."""
    base = paths.cache_root() / "vm"
    found = [p for p in base.glob("*/vmlinuz") if (p.parent / "disk.raw").exists()] if base.exists() else []
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def _prune(directory: Path, keep: int, marker: str = "disk.raw") -> None:
    """Keep the `keep` newest builds in `directory` (each a folder holding `marker`)."""
    builds = sorted(directory.glob(f"*/{marker}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in builds[keep:]:
        shutil.rmtree(directory / old.relative_to(directory).parts[0], ignore_errors=True)


def export_tree(client, tag: str, tree: Path) -> None:
    """The image's filesystem as a directory tree, as a booted system (not a container) needs it."""
    container = client.containers.create(tag, command=["true"])
    try:
        tree.mkdir(parents=True)
        archive = tree.parent / f".{tree.name}.tar"
        with open(archive, "wb") as handle:
            for chunk in container.export():
                handle.write(chunk)
        try:
            commands.checked(["tar", "-x", "--numeric-owner", "-p", "-f", str(archive), "-C", str(tree)])
        finally:
            archive.unlink()
    finally:
        container.remove(force=True)
    # docker export leaves the engine's marker and bind-mount points: this system is no container
    (tree / ".dockerenv").unlink(missing_ok=True)
    (tree / "etc" / "hostname").write_text("kitvm\n")
    (tree / "etc" / "hosts").write_text("127.0.0.1 localhost\n127.0.1.1 kitvm\n")
    resolv = tree / "etc" / "resolv.conf"
    if resolv.is_symlink() or resolv.exists():
        resolv.unlink()
    resolv.write_text("")


def _make_disk(client, tag: str, root: Path, headroom_mib: int) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=root.parent))
    try:
        tree = work / "rootfs"
        export_tree(client, tag, tree)
        kernels = sorted((tree / "boot").glob("vmlinuz-*"))
        initrds = sorted((tree / "boot").glob("initrd.img-*"))
        if not kernels or not initrds:
            raise EnvironmentUnavailable(f"{tag}: no kernel or initrd in /boot of the guest image")
        shutil.copy2(kernels[-1], work / "vmlinuz")
        shutil.copy2(initrds[-1], work / "initrd.img")
        (work / "kernel-release").write_text(kernels[-1].name.removeprefix("vmlinuz-") + "\n")
        used_mib = int(commands.checked(["du", "-sxm", str(tree)]).split()[0])
        size_mib = used_mib + headroom_mib
        commands.checked(
            ["mkfs.ext4", "-q", "-F", "-L", "kitroot", "-d", str(tree), str(work / "disk.raw"), f"{size_mib}M"]
        )
        (work / "guest.json").write_text(json.dumps({"image": tag, "used_mib": used_mib, "size_mib": size_mib}))
        shutil.rmtree(tree)
        if root.exists():
            shutil.rmtree(root)
        work.rename(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
