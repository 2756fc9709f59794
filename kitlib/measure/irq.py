"""Interrupt placement (seed 002, post 4): the peer link's interrupts pinned to the system under
test's CPUs with irqbalance stopped for the run, and everything put back afterwards.

The post pinned the NIC's interrupt vectors next to the Redis instances and stopped irqbalance,
which otherwise spreads them over all CPUs. A veth pair or loopback (a peer namespace, a peer on
this host) raises no interrupts of its own: its packets are handled in softirq context on the
sending CPU, so there is nothing to pin, and `state` says so instead of pretending.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import Service
from kitlib.measure.host import commands

NET = Path("/sys/class/net")
IRQ = Path("/proc/irq")


def interface_with(address: str) -> str:
    """The local interface holding `address` (the side of the link the peer sends to)."""
    done = commands.run(["ip", "-o", "addr", "show", "to", address], timeout=10)
    match = re.match(r"[0-9]+:\s+(\S+)", done.output) if done.ok else None
    if not match:
        raise EnvironmentUnavailable(f"interrupt pinning: no local interface holds {address}")
    return match.group(1).split("@")[0]


def interrupts_of(interface: str) -> list[int]:
    """The interrupt numbers of the device behind `interface` (MSI vectors of its PCI function),
    or [] for virtual links (veth, bridges, loopback), which have none."""
    device = NET / interface / "device"
    if not device.exists():
        return []
    path = device.resolve()
    for candidate in (path, path.parent):
        vectors = candidate / "msi_irqs"
        if vectors.is_dir():
            return sorted(int(p.name) for p in vectors.iterdir() if p.name.isdigit())
    legacy = path / "irq"
    return [int(legacy.read_text())] if legacy.exists() and legacy.read_text().strip() != "0" else []


class IrqPinning(Service):
    """Held by the environment like a server, so it is undone when the environment stops however
    the run ends: the vectors' affinities restored, irqbalance started again if it was running."""

    name = "irq-pinning"

    def __init__(self, interface: str, cpus: Sequence[int]):
        self.interface = interface
        self.cpus = list(cpus)
        self.saved: dict[int, str] = {}
        self.irqbalance: str | None = None  # how it ran: "systemd" or its command line
        self.state = "not done"

    def start(self) -> str:
        """Pin, and return what was done (recorded with every record as `irq_pinning`)."""
        if os.geteuid() != 0:
            raise EnvironmentUnavailable("interrupt pinning needs root (it writes /proc/irq and stops irqbalance)")
        vectors = interrupts_of(self.interface)
        if not vectors:
            self.state = f"not applicable: {self.interface} is a virtual link without interrupts"
            return self.state
        self._stop_irqbalance()
        wanted = ",".join(map(str, self.cpus))
        for irq in vectors:
            affinity = IRQ / str(irq) / "smp_affinity_list"
            try:
                self.saved[irq] = affinity.read_text().strip()
                affinity.write_text(wanted)
            except OSError:  # a vector the kernel manages itself (e.g. a config interrupt)
                self.saved.pop(irq, None)
        if not self.saved:
            self.state = f"not applicable: the kernel refused to move {self.interface}'s interrupts"
        else:
            self.state = f"{len(self.saved)} interrupts of {self.interface} on CPUs {wanted}, irqbalance stopped"
        return self.state

    def stop(self) -> None:
        while self.saved:
            irq, affinity = self.saved.popitem()
            try:
                (IRQ / str(irq) / "smp_affinity_list").write_text(affinity)
            except OSError:
                pass
        self._restart_irqbalance()

    def alive(self) -> bool:
        return bool(self.saved)

    def _stop_irqbalance(self) -> None:
        if commands.run(["systemctl", "is-active", "--quiet", "irqbalance"], timeout=10).ok:
            commands.run(["systemctl", "stop", "irqbalance"], timeout=30)
            self.irqbalance = "systemd"
            return
        pids = commands.run(["pidof", "irqbalance"], timeout=10)
        if pids.ok and pids.output.split():
            pid = pids.output.split()[0]
            self.irqbalance = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            commands.run(["kill", pid], timeout=10)

    def _restart_irqbalance(self) -> None:
        how, self.irqbalance = self.irqbalance, None
        if how == "systemd":
            commands.run(["systemctl", "start", "irqbalance"], timeout=30)
        elif how:
            # not a child of the run: it outlives it, as it ran before
            commands.spawn(how.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=None)
