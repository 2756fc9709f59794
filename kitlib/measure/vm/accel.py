"""Which acceleration a VM gets here: KVM only where a guest kernel really boots under it.

`/dev/kvm` can exist and still hang every guest (nested virtualization without support, a
restrictive sandbox), so presence proves nothing. The probe boots the guest kernel with no root
disk and `panic=-1 -no-reboot`: a kernel that runs far enough to look for its root filesystem
panics and QEMU exits, within seconds under working KVM. The verdict is cached per host kernel,
QEMU and guest kernel. Without KVM the VM runs under TCG and is labelled `qemu-tcg`: it measures
an emulator, never reported as KVM.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import kill_group
from kitlib.measure.host import commands
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.vm.qemu import QEMU

PROBE_TIMEOUT_S = 60
BOOT_MARKERS = ("Kernel panic", "VFS: Unable to mount root", "Run /init as init process")


@dataclass(frozen=True)
class KvmVerdict:
    usable: bool
    reason: str


def qemu_version() -> str | None:
    found = shutil.which(QEMU)
    if found is None:
        return None
    done = commands.run([found, "--version"])
    return done.stdout.splitlines()[0] if done.stdout else None


def kvm_verdict(kernel: Path | None = None, *, probe: bool = True) -> KvmVerdict:
    """Whether KVM works here, proved by booting `kernel` (a cached guest kernel by default)."""
    if not os.path.exists("/dev/kvm"):
        return KvmVerdict(False, "no /dev/kvm (no hardware virtualization, or the kvm module is not loaded)")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return KvmVerdict(False, "/dev/kvm is not accessible to this user (add it to the kvm group)")
    version = qemu_version()
    if version is None:
        return KvmVerdict(False, f"{QEMU} is not installed (apt-get install qemu-system-x86)")
    if kernel is None:
        from kitlib.measure.vm.guest_image import cached_kernels

        kernels = cached_kernels() or sorted(Path("/boot").glob(f"vmlinuz-{platform.release()}"))
        if not kernels:
            return KvmVerdict(False, "/dev/kvm is present but unproven: no guest kernel built yet (`kit vm prepare`)")
        kernel = kernels[0]
    key = hashlib.sha256(f"{platform.release()}|{version}|{kernel}|{kernel.stat().st_size}".encode()).hexdigest()[:16]
    cache = paths.cache_root() / "vm" / f"kvm-probe-{key}.json"
    if cache.exists():
        saved = json.loads(cache.read_text())
        return KvmVerdict(saved["usable"], saved["reason"])
    if not probe:
        return KvmVerdict(False, "/dev/kvm is present but not yet proven by a boot (`kit vm prepare`)")
    verdict = _probe(kernel)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"usable": verdict.usable, "reason": verdict.reason, "kernel": str(kernel)}))
    return verdict


def _probe(kernel: Path) -> KvmVerdict:
    with tempfile.TemporaryDirectory(prefix="kitlib-kvm-probe-") as tmp:
        console = Path(tmp) / "console.log"
        argv = [
            QEMU,
            "-accel",
            "kvm",
            "-cpu",
            "host",
            "-m",
            "256",
            "-nodefaults",
            "-display",
            "none",
            "-no-reboot",
            "-serial",
            f"file:{console}",
            "-kernel",
            str(kernel),
            "-append",
            "console=ttyS0 panic=-1",
        ]
        proc = commands.spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = proc.communicate(timeout=PROBE_TIMEOUT_S)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_group(proc)
            output, _ = proc.communicate()
            timed_out = True
        text = console.read_text(errors="replace") if console.exists() else ""
    if any(marker in text for marker in BOOT_MARKERS):
        return KvmVerdict(True, f"a guest kernel booted under KVM ({kernel.name})")
    if timed_out:
        last = text.strip().splitlines()[-1:] or ["no console output"]
        return KvmVerdict(
            False,
            f"/dev/kvm is present but a guest kernel did not boot under KVM within {PROBE_TIMEOUT_S} s ({last[0]})",
        )
    message = (output or b"").decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
    return KvmVerdict(False, f"QEMU with KVM failed: {message[0][:200]}")


def vm_label_status(label: str) -> tuple[bool, str]:
    """(available, reason) for a VM label, for `kit envs` and `make reproduce`."""
    if qemu_version() is None:
        return False, f"{QEMU} is not installed (apt-get install qemu-system-x86)"
    if os.geteuid() != 0:
        return False, "needs root (a tap device for the guest's virtio NIC)"

    try:
        docker_client()
    except EnvironmentUnavailable as exc:
        return False, f"the guest disk is built from the benchmark image: {exc}"
    if label == "qemu-tcg":
        kvm = kvm_verdict(probe=False)
        note = "; KVM works here, prefer kvm" if kvm.usable else ""
        return True, f"software emulation (TCG): measures an emulator, not a hypervisor; run only when named{note}"
    verdict = kvm_verdict()
    return verdict.usable, verdict.reason
