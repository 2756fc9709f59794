"""The guest's NIC on the host: a tap device with a /30 of its own, routed like a second host.

The peer namespace already routes everything through the host, so a client there reaches the
guest's address through the host's forwarding path and the guest's virtio NIC, as the paper's
client reached its VM. Docker sets the FORWARD policy to DROP; two ACCEPT rules for this tap,
commented with the run's label, let the traffic through and are removed with the tap (`kit clean`
finds them by that comment when a run was killed).
"""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from dataclasses import dataclass

from kitlib import naming
from kitlib.environments.base import StartStop
from kitlib.errors import EnvironmentUnavailable

COMMENT_PREFIX = "kitlib:"


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
        self._rules: list[list[str]] = []
        self._created = False

    def start(self) -> None:
        from kitlib.peer import _free_subnet

        subnet: ipaddress.IPv4Network = _free_subnet()
        host, guest = str(subnet.network_address + 1), str(subnet.network_address + 2)
        self._created = True
        for argv in (
            ["ip", "tuntap", "add", "dev", self.tap, "mode", "tap"],
            ["ip", "addr", "add", f"{host}/30", "dev", self.tap],
            ["ip", "link", "set", self.tap, "up"],
        ):
            _checked(argv)
        self.addresses = TapAddresses(self.tap, host, guest, 30)
        if shutil.which("iptables"):
            comment = f"{COMMENT_PREFIX}{self.run_label}"
            for direction in ("-i", "-o"):
                rule = ["FORWARD", direction, self.tap, "-m", "comment", "--comment", comment, "-j", "ACCEPT"]
                _checked(["iptables", "-w", "-I", *rule])
                self._rules.append(rule)

    def stop(self) -> None:
        while self._rules:
            subprocess.run(["iptables", "-w", "-D", *self._rules.pop()], capture_output=True, check=False)
        if self._created:
            self._created = False
            subprocess.run(["ip", "link", "del", self.tap], capture_output=True, check=False)

    def describe(self) -> dict[str, object]:
        info: dict[str, object] = {"tap": self.tap, "forward_rules": len(self._rules)}
        if self.addresses is not None:
            info.update(host_address=self.addresses.host_address, guest_address=self.addresses.guest_address)
        return info


def orphaned_forward_rules(is_orphan) -> list[list[str]]:
    """FORWARD rules whose comment names a run label `is_orphan` accepts (its owner is gone)."""
    if shutil.which("iptables") is None:
        return []
    listing = subprocess.run(["iptables", "-w", "-S", "FORWARD"], capture_output=True, text=True, check=False)
    found = []
    for line in listing.stdout.splitlines():
        if COMMENT_PREFIX not in line or not line.startswith("-A FORWARD"):
            continue
        words = line.split()
        label = next((w.strip('"').removeprefix(COMMENT_PREFIX) for w in words if COMMENT_PREFIX in w), "")
        if is_orphan(label):
            found.append([w.strip('"') for w in words[1:]])
    return found


def remove_forward_rule(rule: list[str]) -> None:
    subprocess.run(["iptables", "-w", "-D", *rule], capture_output=True, check=False)


def _checked(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise EnvironmentUnavailable(f"cannot set up the VM's network: `{' '.join(argv)}`: {done.stderr.strip()}")
