"""Ports free on this host, for servers the kit starts (their numbers are recorded with the run)."""

from __future__ import annotations

import random
import socket
from pathlib import Path


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free on this host now, below the kernel's ephemeral range: load
    generators draw their own client ports (and leave TIME_WAIT sockets) from that range, so a port
    taken from it could be held when the next point's server or proxy listens on it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng, found = random.Random(), []
    for _ in range(100 * count + 1000):
        if len(found) == count:
            return found
        port = rng.randrange(max(1024, low - 12000), low)
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                continue
        if port not in found:
            found.append(port)
    raise OSError(f"no {count} free ports below the ephemeral range ({low}) on this host")


def is_free(port: int) -> bool:
    """Whether a server could listen on `port` now, TCP and UDP, on every address (as servers bind,
    with SO_REUSEADDR): a connection still closing holds the port although nothing listens."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                return False
    return True
