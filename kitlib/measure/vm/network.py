"""The guest's NIC on the host: a tap device with a /30 of its own, routed like a second host.

The peer namespace already routes everything through the host, so a client there reaches the
guest's address through the host's forwarding path and the guest's virtio NIC, as the paper's
client reached its VM. The tap's FORWARD rules (`kitlib.measure.host.forwarding`) go with it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from kitlib.core import naming
from kitlib.measure.host import links
from kitlib.measure.host.forwarding import ForwardRules
from kitlib.measure.host.lifecycle import StartStop


@dataclass(frozen=True)
class TapAddresses:
    tap: str
    host_address: str
    guest_address: str
    prefix: int


class TapNetwork(StartStop):
    """Creates the tap, its host address and the FORWARD rules; removes all of them on stop."""

    def __init__(self, run_label: str, role: str = "t"):
        self.run_label = run_label
        self.tap = naming.interface_name(run_label, role)
        self.addresses: TapAddresses | None = None
        self.rules = ForwardRules(run_label, self.tap)
        self._created = False

    def start(self) -> None:
        subnet: ipaddress.IPv4Network = links.free_subnet()
        host, guest = str(subnet.network_address + 1), str(subnet.network_address + 2)
        self._created = True
        for argv in (
            ["ip", "tuntap", "add", "dev", self.tap, "mode", "tap"],
            ["ip", "addr", "add", f"{host}/30", "dev", self.tap],
            ["ip", "link", "set", self.tap, "up"],
        ):
            links.ip(argv, "set up the VM's network")
        self.addresses = TapAddresses(self.tap, host, guest, 30)
        self.rules.start()

    def stop(self) -> None:
        self.rules.stop()
        if self._created:
            self._created = False
            links.quietly(["ip", "link", "del", self.tap])

    def describe(self) -> dict[str, object]:
        info: dict[str, object] = {"tap": self.tap, "forward_rules": len(self.rules.rules)}
        if self.addresses is not None:
            info.update(host_address=self.addresses.host_address, guest_address=self.addresses.guest_address)
        return info
