"""`kvm`, `kvm-tuned`, `qemu-tcg`: the system under test runs in a QEMU guest reached over SSH.

The guest boots from a private copy of the disk made of the benchmark image (same binaries as the
containers), gets a fresh SSH key pair and host key through a small seed disk, and a virtio NIC on
a tap of its own, which the peer reaches through the host's forwarding path. Every command goes
through fabric with the guest's host key pinned. `stop` quits QEMU and removes the tap, the
forwarding rules, the disk copy and the keys, also after a failed boot or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kitlib.core import numa, paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import kill_group
from kitlib.measure.environments.base import Environment
from kitlib.measure.environments.remote import SshTransport
from kitlib.measure.host import commands
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.vm.accel import kvm_verdict, qemu_version
from kitlib.measure.vm.guest_image import ensure_guest
from kitlib.measure.vm.network import TapNetwork
from kitlib.measure.vm.qemu import Qmp, VmConfig, command_line
from kitlib.specs.labels import slug as label_slug

#: seconds from QEMU's start until SSH answers, by acceleration
BOOT_TIMEOUT_S = {"kvm": 180.0, "tcg": 420.0}
DEFAULT_MEMORY_MIB = 4096


class VmEnvironment(Environment):
    kind = "vm"

    def __init__(
        self,
        *args: Any,
        image: str,
        client=None,
        memory_mib: int | None = None,
        boot_timeout: float | None = None,
        extra_drives: list[Path] | None = None,
        accel: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.image = image
        self.client = client
        self.memory_mib = memory_mib
        self.boot_timeout = boot_timeout
        self.extra_drives = list(extra_drives or [])
        self._accel = accel
        self.config = None
        self.guest = None
        self.network = None
        self.process: subprocess.Popen | None = None
        self.local_dir: Path | None = None
        self.boot_to_ready_s: float | None = None
        self.vcpu_pinning: dict[int, int] = {}

    @property
    def accel(self) -> str:
        if self._accel:
            return self._accel
        return "tcg" if self.spec.label.split("+")[0] == "qemu-tcg" else "kvm"

    @property
    def emulated(self) -> bool:
        return self.accel == "tcg"

    @property
    def tuned(self) -> bool:
        return self.spec.label.split("+")[0] == "kvm-tuned"

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if os.geteuid() != 0:
            raise EnvironmentUnavailable(f"{self.label}: needs root (a tap device for the guest's NIC)")
        if "numa" in self.spec.options:
            numa.require_node(self.label, self.spec.options["numa"])
        if self.client is None:
            self.client = docker_client()
        self.guest = ensure_guest(self.client, self.image)
        if self.accel == "kvm":
            verdict = kvm_verdict(self.guest.kernel)
            if not verdict.usable:
                raise EnvironmentUnavailable(f"{self.label}: KVM is not usable here: {verdict.reason}")
        root = paths.own_scratch_root()
        self.local_dir = Path(tempfile.mkdtemp(prefix=f"{self.run_label}-vm-", dir=root))
        self.network = TapNetwork(self.run_label)
        self.network.start()
        self.config = self._configure()
        self._make_disk()
        self._make_seed()
        self._boot()
        self.address = self.network.addresses.guest_address
        key, known_hosts = str(self.local_dir / "id_ed25519"), str(self.local_dir / "known_hosts")
        self.transport = SshTransport(f"root@{self.address}", self._pin, key_filename=key, known_hosts=known_hosts)
        self._wait_for_ssh()
        self.boot_to_ready_s = round(time.monotonic() - self._booted_at, 3)
        self.transport.connect(self.run_label)

    def _configure(self):
        vcpus = max(1, len(self.layout.sut_cpus))
        memory = self.memory_mib or _memory_from_label(self.spec.options.get("mem")) or _default_memory()
        disk_format = self.spec.storage or "raw"
        return VmConfig(
            name=f"{self.run_label}-{label_slug(self.spec.label)}",
            accel=self.accel,
            tuned=self.tuned,
            vcpus=vcpus,
            memory_mib=memory,
            host_cpus=list(self.layout.sut_cpus),
            disk=self.local_dir / f"disk.{disk_format}",
            disk_format=disk_format,
            seed=self.local_dir / "seed.img",
            kernel=self.guest.kernel,
            initrd=self.guest.initrd,
            tap=self.network.tap,
            mac="52:54:00:" + ":".join(secrets.token_hex(1) for _ in range(3)),
            vhost=self.accel == "kvm" and os.path.exists("/dev/vhost-net"),
            hugepages=self.tuned and _hugepages_free_mib() >= memory,
            disk_cache="none" if _supports_direct_io(self.local_dir) else "writeback",
            workdir=self.local_dir,
            extra_drives=self.extra_drives,
        )

    def _make_disk(self) -> None:
        base = self.guest.disk
        if self.config.disk_format == "qcow2":
            commands.checked(
                ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(base), str(self.config.disk)]
            )
        else:
            commands.checked(["cp", "--sparse=always", "--reflink=auto", str(base), str(self.config.disk)])

    def _make_seed(self) -> None:
        seed = self.local_dir / "seed"
        seed.mkdir()
        for comment, key in ((self.run_label, self.local_dir / "id_ed25519"), ("kitvm", seed / "ssh_host_ed25519_key")):
            commands.checked(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(key)])
        shutil.copy(self.local_dir / "id_ed25519.pub", seed / "authorized_keys")
        addresses = self.network.addresses
        (seed / "network").write_text(
            f"ADDRESS={addresses.guest_address}/{addresses.prefix}\nGATEWAY={addresses.host_address}\n"
            f"MAC={self.config.mac}\n"
        )
        host_key = (seed / "ssh_host_ed25519_key.pub").read_text().split()
        (self.local_dir / "known_hosts").write_text(f"{addresses.guest_address} {host_key[0]} {host_key[1]}\n")
        commands.checked(["mkfs.ext4", "-q", "-F", "-L", "KITSEED", "-d", str(seed), str(self.config.seed), "8M"])
        os.chmod(self.local_dir / "id_ed25519", 0o600)

    def _boot(self) -> None:
        argv = command_line(self.config)
        if "numa" in self.spec.options:  # the node was checked in `start`
            node = self.spec.options["numa"]
            argv = ["numactl", f"--cpunodebind={node}", f"--membind={node}", *argv]
        self.commands.append({"where": f"host:{self.label}", "argv": argv})
        log = open(self.local_dir / "qemu.log", "wb")  # noqa: SIM115 - closed with the process
        self._booted_at = time.monotonic()
        with log:
            self.process = commands.spawn(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if self.tuned:
            self._pin_vcpus()

    def _pin_vcpus(self) -> None:
        threads = Qmp(self.config.qmp_socket).vcpu_threads()
        for index, thread in enumerate(threads):
            cpu = self.config.host_cpus[index % len(self.config.host_cpus)]
            commands.checked(["taskset", "-p", "-c", str(cpu), str(thread)])
            self.vcpu_pinning[index] = cpu

    def _wait_for_ssh(self) -> None:
        timeout = self.boot_timeout or BOOT_TIMEOUT_S[self.accel]
        deadline = self._booted_at + timeout
        last_error = "SSH did not answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EnvironmentUnavailable(
                    f"{self.label}: QEMU exited with {self.process.returncode} during boot: {self._last_words()}"
                )
            if _port_open(self.address, 22):
                try:
                    self.transport.open(timeout=10).close()
                    return
                except EnvironmentUnavailable as exc:
                    last_error = str(exc)
            time.sleep(1.0)
        raise EnvironmentUnavailable(
            f"{self.label}: the guest did not answer SSH within {timeout:.0f} s ({last_error}); {self._last_words()}"
        )

    def _last_words(self) -> str:
        lines = []
        for name in ("qemu.log", "console.log"):
            path = self.local_dir / name if self.local_dir else None
            if path is not None and path.exists():
                tail = path.read_text(errors="replace").strip().splitlines()[-8:]
                if tail:
                    lines.append(f"{name}:\n  " + "\n  ".join(tail))
        return "\n".join(lines) or "no output from QEMU or the guest console"

    def _teardown(self) -> None:
        if self.transport is not None:
            with contextlib.suppress(Exception):  # the guest is going away anyway
                self.transport.close()
            self.transport = None
        if self.process is not None:
            self._quit()
            self.process = None
        if self.network is not None:
            self.network.stop()
            self.network = None
        if self.local_dir is not None:
            shutil.rmtree(self.local_dir, ignore_errors=True)
            self.local_dir = None

    def _quit(self) -> None:
        """Ask QEMU to quit over QMP; signal its process group if it does not within a few seconds."""
        if self.process.poll() is None:
            try:
                Qmp(self.config.qmp_socket, timeout=3).command("quit")
                self.process.wait(timeout=10)
            except Exception:
                kill_group(self.process, grace=5)

    # -- running things --------------------------------------------------------------------
    def _pin(self, argv: list[str], cpus: Sequence[int] | None) -> list[str]:
        """Host CPU numbers mean nothing in the guest: the whole VM is the system under test's CPUs,
        so a command asked to run on some of them runs on the matching vCPUs."""
        env = ["env", *self.guest.env] if self.guest and self.guest.env else []
        if not cpus:
            return [*env, *argv]
        vcpus = sorted({self.layout.sut_cpus.index(c) for c in cpus if c in self.layout.sut_cpus})
        if not vcpus or len(vcpus) >= self.config.vcpus:
            return [*env, *argv]
        return [*env, "taskset", "-c", ",".join(map(str, vcpus)), *argv]

    # -- where things are ------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        info = {**super().describe(), "address": self.address, **(self.transport.facts() if self.transport else {})}
        info.update(
            accel=self.accel,
            hypervisor="KVM" if self.accel == "kvm" else "none: QEMU software emulation (TCG)",
            qemu_version=qemu_version(),
            image=self.image,
            guest_image=self.guest.image if self.guest else None,
            guest_kernel=self.guest.kernel_release if self.guest else None,
            boot_to_ready_s=self.boot_to_ready_s,
            vcpu_pinning={str(k): v for k, v in self.vcpu_pinning.items()},
            tap_network=self.network.describe() if self.network else None,
        )
        if self.config is not None:
            info["vm"] = self.config.describe()
        return info

    def write_libvirt_xml(self, directory: Path) -> Path | None:
        """A libvirt domain matching this VM, for users who prefer libvirt (not used by the kit)."""
        try:
            from kitlib.measure.vm.libvirt import domain_xml
        except ImportError:
            return None
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{label_slug(self.spec.label)}.xml"
        path.write_text(domain_xml(self.config))
        return path


def _port_open(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=1.0):
            return True
    except OSError:
        return False


def _supports_direct_io(directory: Path) -> bool:
    probe = directory / ".direct-io-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
        os.close(fd)
        return True
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


def _hugepages_free_mib() -> int:
    try:
        info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        free_pages = int(info["HugePages_Free"].strip())
        size_kib = int(info["Hugepagesize"].strip().split()[0])
    except (OSError, KeyError, ValueError):
        return 0
    return free_pages * size_kib // 1024


def _memory_from_label(value: str | None) -> int | None:
    if not value:
        return None
    number, unit = int(value[:-1]), value[-1]
    return number * {"k": 1, "m": 1, "g": 1024}[unit] // (1024 if unit == "k" else 1)


def _default_memory() -> int:
    total_mib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return min(DEFAULT_MEMORY_MIB, max(512, total_mib // 2))
