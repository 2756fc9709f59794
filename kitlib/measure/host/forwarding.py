"""FORWARD rules that let the peer namespace reach an interface the kit made (a VM's tap, a
system container's veth) through the host, commented with the run's label so `kit clean` finds
the rules of a killed run. Docker sets the FORWARD policy to DROP; these two rules are the only
hole, and they go with the interface."""

from __future__ import annotations

import shutil

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import commands
from kitlib.measure.host.lifecycle import StartStop

COMMENT_PREFIX = "kitlib:"


class ForwardRules(StartStop):
    """ACCEPT in and out of one interface, inserted on start, deleted on stop."""

    def __init__(self, run_label: str, interface: str):
        self.comment = f"{COMMENT_PREFIX}{run_label}"
        self.interface = interface
        self.rules: list[list[str]] = []

    def start(self) -> None:
        if shutil.which("iptables") is None:
            return
        for direction in ("-i", "-o"):
            rule = ["FORWARD", direction, self.interface, "-m", "comment", "--comment", self.comment, "-j", "ACCEPT"]
            done = commands.run(["iptables", "-w", "-I", *rule])
            if not done.ok:
                raise EnvironmentUnavailable(f"cannot add a FORWARD rule for {self.interface}: {done.stderr.strip()}")
            self.rules.append(rule)

    def stop(self) -> None:
        while self.rules:
            remove(self.rules.pop())


def orphaned(is_orphan) -> list[list[str]]:
    """FORWARD rules whose comment names a run label `is_orphan` accepts (its owner is gone)."""
    if shutil.which("iptables") is None:
        return []
    listing = commands.run(["iptables", "-w", "-S", "FORWARD"])
    found = []
    for line in listing.stdout.splitlines():
        if COMMENT_PREFIX not in line or not line.startswith("-A FORWARD"):
            continue
        words = [w.strip('"') for w in line.split()]
        label = next((w.removeprefix(COMMENT_PREFIX) for w in words if w.startswith(COMMENT_PREFIX)), "")
        if is_orphan(label):
            found.append(words[1:])
    return found


def remove(rule: list[str]) -> None:
    commands.run(["iptables", "-w", "-D", *rule])
