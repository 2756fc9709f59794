"""Links on this host: free subnets for the kit's own veth and tap pairs, and `ip` commands that
must succeed (each logged through `kitlib.measure.host.commands`)."""

from __future__ import annotations

import ipaddress
import random

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import commands

#: The range the kit's own links draw their subnets from (a /30 each); skipped where the host routes it.
KIT_SUPERNET = ipaddress.ip_network("10.231.0.0/16")


def ip(argv: list[str], what: str = "set up the peer namespace") -> None:
    """Run an `ip …` (or other link) command that must succeed, else EnvironmentUnavailable naming it."""
    done = commands.run(argv, timeout=60)
    if not done.ok:
        raise EnvironmentUnavailable(f"cannot {what}: `{' '.join(argv)}`: {done.output.strip()}")


def quietly(argv: list[str]) -> None:
    """A removal that may find nothing left to remove (teardown after a half-done start)."""
    commands.run(argv, timeout=60)


def free_subnet() -> ipaddress.IPv4Network:
    """A /30 of KIT_SUPERNET that no address or route of this host overlaps."""
    used = routed_networks()
    candidates = list(KIT_SUPERNET.subnets(new_prefix=30))
    random.shuffle(candidates)
    for subnet in candidates[:2000]:
        if not any(subnet.overlaps(net) for net in used):
            return subnet
    raise EnvironmentUnavailable(f"no free /30 in {KIT_SUPERNET} for the kit's links")


def routed_networks() -> list[ipaddress.IPv4Network]:
    out = commands.run(["ip", "-4", "-o", "route", "show", "table", "all"]).output
    out += commands.run(["ip", "-4", "-o", "addr", "show"]).output
    nets = []
    for word in out.split():
        if "/" in word or word.count(".") == 3:
            try:
                net = ipaddress.ip_network(word, strict=False)
            except ValueError:
                continue
            if net.prefixlen > 0:
                nets.append(net)
    return nets
