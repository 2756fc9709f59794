"""QEMU/KVM guests built from the benchmark image: disk, acceleration probe, tap network, QEMU.

The environment that uses all of this is `kitlib.measure.environments.vm`; `cleanup_leftovers` is what
`kit clean` calls for VMs of runs that were killed.
"""

from __future__ import annotations

from pathlib import Path

from kitlib.core import naming
from kitlib.core.procs import pid_alive, stop_pid


def qemu_processes() -> list[tuple[int, str]]:
    """(pid, VM name) of every QEMU process named after a kit run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv or not argv[0].endswith(b"qemu-system-x86_64") or b"-name" not in argv:
            continue
        name = argv[argv.index(b"-name") + 1].decode(errors="replace").split(",")[0]
        if naming.owner_pid(name) is not None:
            found.append((int(entry.name), name))
    return found


def cleanup_leftovers() -> list[str]:
    """Stop QEMU processes whose owning run is gone."""

    def orphaned(name: str) -> bool:
        owner = naming.owner_pid(name)
        return owner is not None and not pid_alive(owner)

    removed = []
    for pid, name in qemu_processes():
        if orphaned(name):
            stop_pid(pid, 5.0)
            removed.append(f"vm {name} (qemu pid {pid})")
    return removed
