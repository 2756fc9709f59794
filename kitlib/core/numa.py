"""NUMA placement (seed 002): pin an environment's CPUs and memory to one node of the host.

On a host with a single node there is nothing to place: the option is then reported as not
applicable, never silently ignored.
"""

from __future__ import annotations

from pathlib import Path

from kitlib.core.errors import EnvironmentUnavailable

NODES = Path("/sys/devices/system/node")


def nodes() -> list[int]:
    found = sorted(int(p.name.removeprefix("node")) for p in NODES.glob("node[0-9]*"))
    return found or [0]


def cpulist(node: int) -> str:
    """The node's CPUs as the kernel lists them (`0-7,16-23`)."""
    return (NODES / f"node{node}" / "cpulist").read_text().strip()


def require_node(label: str, node: int) -> str:
    """The CPU list of `node`, or EnvironmentUnavailable saying why the placement does not apply."""
    present = nodes()
    if len(present) < 2:
        raise EnvironmentUnavailable(f"{label}: NUMA placement is not applicable on this host: it has one NUMA node")
    if node not in present:
        raise EnvironmentUnavailable(f"{label}: no NUMA node {node}; this host has nodes {present}")
    return cpulist(node)
