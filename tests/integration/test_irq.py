"""Interrupt placement on this machine's real links: a veth pair has no interrupts to pin; a NIC's
vectors are pinned and their affinities restored when the environment holding the pinning stops."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kitlib.measure import irq
from kitlib.measure.environments import create
from kitlib.measure.environments.base import Layout

pytestmark = [pytest.mark.netns]


def default_route_interface() -> str:
    route = subprocess.run(["ip", "-o", "route", "show", "default"], capture_output=True, text=True).stdout.split()
    return route[route.index("dev") + 1] if "dev" in route else "lo"


def test_loopback_and_a_veth_have_no_interrupts(root_netns):
    assert irq.interface_with("127.0.0.1") == "lo" and irq.interrupts_of("lo") == []
    name = f"kirq{os.getpid() % 100000}"
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p"], check=True)
    try:
        assert irq.interrupts_of(name) == []
        state = irq.IrqPinning(name, [0]).start()
        assert state == f"not applicable: {name} is a virtual link without interrupts"
    finally:
        subprocess.run(["ip", "link", "del", name], check=True)


def test_a_nics_vectors_are_pinned_and_restored_with_the_environment(root_netns):
    interface = default_route_interface()
    vectors = irq.interrupts_of(interface)
    if not vectors:
        pytest.skip(f"{interface}, this machine's default link, has no interrupts of its own to pin")
    before = {n: Path(f"/proc/irq/{n}/smp_affinity_list").read_text().strip() for n in vectors}
    cpu = os.sched_getaffinity(0)
    target = [max(cpu)]
    with create("native", Layout(target, [min(cpu)]), run_label="kit-irq-test", peer_reaches_nat=False) as env:
        pinning = env.hold(irq.IrqPinning(interface, target))
        state = pinning.start()
        assert state.startswith(f"{len(pinning.saved)} interrupts of {interface} on CPUs {target[0]}"), state
        moved = {n: Path(f"/proc/irq/{n}/smp_affinity_list").read_text().strip() for n in pinning.saved}
        assert set(moved.values()) == {str(target[0])}
    after = {n: Path(f"/proc/irq/{n}/smp_affinity_list").read_text().strip() for n in vectors}
    assert after == before, "every vector's affinity is back as it was"
