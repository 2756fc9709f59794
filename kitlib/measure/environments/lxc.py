"""`lxc`: a system container. The benchmark image's root filesystem (plus systemd) boots its own
init under LXC, as the system containers of the placement study (seed 003) did.

The root filesystem is an overlay on a tree unpacked once per image, so the container runs the
same binaries as Docker and the VM; the data directory is a plain host directory bind-mounted in
(no union filesystem under the data, like a Docker volume). The container's veth runs in LXC's
router mode with an address of its own, which the peer reaches through the host's forwarding
path. Commands run through `lxc-attach` with the image's environment. Everything lives in one
scratch folder named after the run, removed on stop; `kit clean` stops containers of killed runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from kitlib.core import naming, paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.procs import run_bounded
from kitlib.measure.environments.base import Environment
from kitlib.measure.environments.remote import Transport
from kitlib.measure.host import commands, links
from kitlib.measure.host.docker_engine import docker_client
from kitlib.measure.host.forwarding import ForwardRules
from kitlib.measure.vm.guest_image import ensure_system_tree

READY_TIMEOUT_S = 90.0
#: where the host's data folder appears inside the container
SHARED_DIR = "/var/tmp/kit"


#: lxc-attach re-executes itself from a memfd before it attaches; where that fails now and then
#: ("Device or resource busy") it aborts before the command starts, so running it again is safe
ATTACH_NEVER_STARTED = "Failed to rexec as memfd"


class LxcEnvironment(Environment):
    kind = "lxc"

    def __init__(self, *args: Any, image: str, client=None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.image = image
        self.client = client
        self.tree = None
        self.local_dir: Path | None = None
        self.name = f"{self.run_label}-lxc"
        self.veth = naming.interface_name(self.run_label, "l")
        self.rules = None
        self.started = False
        self.start_to_ready_s: float | None = None
        self.transport = Transport(self._attach, self._pin, SHARED_DIR)

    @property
    def lxcpath(self) -> str:
        return str(self.local_dir)

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if os.geteuid() != 0:
            raise EnvironmentUnavailable(f"{self.label}: needs root (lxc-start)")
        if shutil.which("lxc-start") is None:
            raise EnvironmentUnavailable(f"{self.label}: LXC is not installed (apt-get install lxc)")
        if self.client is None:
            self.client = docker_client()
        self.tree = ensure_system_tree(self.client, self.image)
        root = paths.own_scratch_root()
        self.local_dir = Path(tempfile.mkdtemp(prefix=f"{self.run_label}-lxc-", dir=root))
        (self.local_dir / "shared" / "data").mkdir(parents=True)
        (self.local_dir / self.name / "upper").mkdir(parents=True)
        subnet = links.free_subnet()
        gateway, self.address = str(subnet.network_address + 1), str(subnet.network_address + 2)
        (self.local_dir / self.name / "config").write_text(self._config(gateway))
        began = time.monotonic()
        done = commands.run(
            ["lxc-start", "-P", self.lxcpath, "-n", self.name, "-o", str(self.local_dir / "lxc.log"), "-l", "INFO"],
            timeout=60,
        )
        self.started = True
        if not done.ok:
            raise EnvironmentUnavailable(f"{self.label}: lxc-start failed: {done.output.strip()} {self._log_tail()}")
        self.rules = ForwardRules(self.run_label, self.veth)
        self.rules.start()
        self._wait_until_booted()
        self.start_to_ready_s = round(time.monotonic() - began, 3)

    def _config(self, gateway: str) -> str:
        cpus = self.spec.options.get("cpus") or ",".join(map(str, self.layout.sut_cpus))
        controller = "cgroup2" if Path("/sys/fs/cgroup/cgroup.controllers").exists() else "cgroup"
        lines = [
            f"lxc.uts.name = {self.name[:60]}",
            f"lxc.rootfs.path = overlay:{self.tree.rootfs}:{self.local_dir / self.name / 'upper'}",
            "lxc.include = /usr/share/lxc/config/common.conf",
            "lxc.apparmor.profile = unconfined",
            "lxc.net.0.type = veth",
            "lxc.net.0.veth.mode = router",
            f"lxc.net.0.veth.pair = {self.veth}",
            "lxc.net.0.flags = up",
            f"lxc.net.0.ipv4.address = {self.address}/32",
            f"lxc.net.0.ipv4.gateway = {gateway}",
            f"lxc.mount.entry = {self.local_dir / 'shared'} {SHARED_DIR.lstrip('/')} none bind,create=dir 0 0",
        ]
        if cpus:
            lines.append(f"lxc.{controller}.cpuset.cpus = {cpus}")
        if "mem" in self.spec.options:
            key = "memory.max" if controller == "cgroup2" else "memory.limit_in_bytes"
            lines.append(f"lxc.{controller}.{key} = {self.spec.options['mem'].upper()}")
        return "\n".join(lines) + "\n"

    def _wait_until_booted(self) -> None:
        """Until the container's systemd has finished booting ("running", or "degraded": a unit
        the benchmarks do not need failed, which a container without devices expects)."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        state = "not answering"
        while time.monotonic() < deadline:
            code, output = self.execute(["systemctl", "is-system-running"], timeout=10, cpus=[])
            state = output.strip().splitlines()[-1] if output.strip() else state
            if state in ("running", "degraded"):
                return
            time.sleep(0.3)
        raise EnvironmentUnavailable(
            f"{self.label}: the container's init did not finish booting in {READY_TIMEOUT_S:.0f} s "
            f"(state: {state}) {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        log = self.local_dir / "lxc.log" if self.local_dir else None
        if log is None or not log.exists():
            return ""
        return "; lxc.log:\n  " + "\n  ".join(log.read_text(errors="replace").strip().splitlines()[-6:])

    def _teardown(self) -> None:
        if self.started:
            if not commands.run(["lxc-stop", "-P", self.lxcpath, "-n", self.name, "-t", "10"], timeout=30).ok:
                commands.run(["lxc-stop", "-P", self.lxcpath, "-n", self.name, "-k"], timeout=30)
            self.started = False
        if self.rules is not None:
            self.rules.stop()
            self.rules = None
        links.quietly(["ip", "link", "del", self.veth])
        if self.local_dir is not None:
            shutil.rmtree(self.local_dir, ignore_errors=True)
            self.local_dir = None

    # -- running things --------------------------------------------------------------------
    def _attach(self, argv: list[str], timeout: float) -> tuple[int | None, str]:
        variables = [arg for item in (self.tree.env if self.tree else []) for arg in ("-v", item)]
        command = ["lxc-attach", "-P", self.lxcpath, "-n", self.name, "--clear-env", *variables, "--"]
        command += ["timeout", "--kill-after=5", f"{timeout:.0f}", *argv]
        code, output = run_bounded(command, timeout=timeout + 30)
        if code is not None and code < 0 and ATTACH_NEVER_STARTED in output:  # the command never ran: once more
            code, output = run_bounded(command, timeout=timeout + 30)
        return (None if code in (124, 137) else code), output

    # -- where things are ------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        version = commands.run(["lxc-start", "--version"], timeout=10).output.strip()
        info = {
            **super().describe(),
            "network": "veth (LXC router mode), reached through the host's forwarding path",
            "storage": "root: overlay on the unpacked image; data: a host directory bind-mounted in",
            "lxc_version": version,
            "init": "systemd",
            "image": self.image,
            "system_image": self.tree.image if self.tree else None,
            "address": self.address,
            "veth": self.veth,
            "start_to_ready_s": self.start_to_ready_s,
        }
        if self.local_dir is not None:
            info["kernel"] = self.execute(["uname", "-r"], timeout=30, cpus=[])[1].strip()
        return info


def orphaned_containers(is_orphan) -> list[tuple[str, str]]:
    """(lxcpath, name) of system containers in scratch folders whose run is gone."""
    root = paths.scratch_root()
    found = []
    if root.exists():
        for folder in root.iterdir():
            if "-lxc-" in folder.name and is_orphan(folder.name):
                found += [(str(folder), config.parent.name) for config in folder.glob("*/config")]
    return found
