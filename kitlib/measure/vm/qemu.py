"""One VM's configuration and the QEMU command line made of it (the libvirt XML is made of it too)."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

QEMU = "qemu-system-x86_64"


@dataclass(frozen=True)
class VmConfig:
    """Everything that decides how the guest runs; recorded in provenance as it is."""

    name: str
    accel: str  # kvm | tcg
    tuned: bool
    vcpus: int
    memory_mib: int
    host_cpus: list[int]  # where vCPU threads are pinned (tuned only)
    disk: Path
    disk_format: str  # raw | qcow2
    seed: Path
    kernel: Path
    initrd: Path
    tap: str
    mac: str
    vhost: bool
    hugepages: bool
    disk_cache: str  # none (O_DIRECT on the host) | writeback where the host filesystem lacks O_DIRECT
    workdir: Path
    #: more read-only raw disks after the seed (vdc, …): e.g. an image archive for Docker in the guest
    extra_drives: list[Path] = field(default_factory=list)
    kernel_args: list[str] = field(default_factory=lambda: ["root=/dev/vda", "rw", "console=ttyS0", "net.ifnames=0"])

    @property
    def cpu_model(self) -> str:
        """Tuned KVM exposes the host CPU; stock KVM keeps QEMU's default model (qemu64), as stock
        KVM did. Under TCG an instruction the model does not advertise traps, and OpenBLAS's kernel
        for qemu64's CPU family uses some (HPL dies with SIGILL), so TCG gets `max`: every feature
        the emulator implements, whatever the host has."""
        if self.accel != "kvm":
            return "max"
        return "host" if self.tuned else "qemu64"

    @property
    def qmp_socket(self) -> Path:
        return self.workdir / "qmp.sock"

    @property
    def console_log(self) -> Path:
        return self.workdir / "console.log"

    def describe(self) -> dict[str, object]:
        def plain(value: object) -> object:
            if isinstance(value, list):
                return [plain(item) for item in value]
            return str(value) if isinstance(value, Path) else value

        facts = {k: plain(v) for k, v in asdict(self).items()}
        facts["cpu_model"] = self.cpu_model
        return facts


def command_line(config: VmConfig) -> list[str]:
    """The QEMU argv for `config`: direct kernel boot, virtio-blk root and seed, virtio-net on a tap."""
    accel = "kvm" if config.accel == "kvm" else "tcg,thread=multi"
    smp = f"{config.vcpus},sockets=1,cores={config.vcpus},threads=1" if config.tuned else str(config.vcpus)
    aio = "native" if config.disk_cache == "none" else "threads"
    netdev = f"tap,id=net0,ifname={config.tap},script=no,downscript=no" + (",vhost=on" if config.vhost else "")
    argv = [
        QEMU,
        "-name",
        f"{config.name},debug-threads=on",
        "-machine",
        "q35",
        "-accel",
        accel,
        "-cpu",
        config.cpu_model,
        "-smp",
        smp,
        "-m",
        str(config.memory_mib),
    ]
    if config.hugepages:
        argv += ["-mem-path", "/dev/hugepages", "-mem-prealloc"]
    argv += [
        "-nodefaults",
        "-display",
        "none",
        "-no-reboot",
        "-serial",
        f"file:{config.console_log}",
        "-kernel",
        str(config.kernel),
        "-initrd",
        str(config.initrd),
        "-append",
        " ".join(config.kernel_args),
        "-drive",
        f"file={config.disk},if=virtio,format={config.disk_format},cache={config.disk_cache},aio={aio}",
        "-drive",
        f"file={config.seed},if=virtio,format=raw,readonly=on",
        *[arg for drive in config.extra_drives for arg in ("-drive", _extra_drive(drive))],
        "-netdev",
        netdev,
        "-device",
        f"virtio-net-pci,netdev=net0,mac={config.mac}",
        "-device",
        "virtio-rng-pci",
        "-qmp",
        f"unix:{config.qmp_socket},server=on,wait=off",
    ]
    return argv


class Qmp:
    """The QEMU machine protocol over the VM's unix socket: vCPU threads, a clean quit."""

    def __init__(self, path: Path, timeout: float = 10.0):
        self.path = path
        self.timeout = timeout

    def command(self, name: str) -> object:
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(self.timeout)
                sock.connect(str(self.path))
                break
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        with sock, sock.makefile("rw") as stream:
            json.loads(stream.readline())  # greeting
            for request in ({"execute": "qmp_capabilities"}, {"execute": name}):
                stream.write(json.dumps(request) + "\n")
                stream.flush()
                while True:
                    line = stream.readline()
                    if not line:
                        return None  # quit closes the socket
                    reply = json.loads(line)
                    if "return" in reply or "error" in reply:
                        break
            if "error" in reply:
                raise RuntimeError(f"QMP {name}: {reply['error']}")
            return reply["return"]

    def vcpu_threads(self) -> list[int]:
        reply = self.command("query-cpus-fast")
        return [cpu["thread-id"] for cpu in sorted(reply, key=lambda c: c["cpu-index"])]  # type: ignore[union-attr]


def _extra_drive(drive: Path) -> str:
    """A raw file is attached read-only (an archive to read); a qcow2 one writable (an overlay of a
    cached disk, which the guest changes without touching the cache)."""
    if drive.suffix == ".qcow2":
        return f"file={drive},if=virtio,format=qcow2"
    return f"file={drive},if=virtio,format=raw,readonly=on"
