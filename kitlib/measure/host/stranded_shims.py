"""containerd shims (and gVisor sandboxes) whose container the Docker engine no longer has.

A runtime that fails after its sandbox started (gVisor's runsc when its network stack cannot be set
up) leaves the shim and the sandbox running after the engine removed the container: the engine
forgets them, so neither `docker rm` nor a daemon restart stops them. They are found here by the
container id on their command lines, the sandbox is deleted through its own runtime (so the
runtime's state goes too) and the shim is stopped.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kitlib.core.procs import stop_pid

PROC = Path("/proc")
#: the engine's containerd namespace: shims of other namespaces (Kubernetes, nerdctl) are not the engine's
ENGINE_NAMESPACE = "moby"
#: how long a stopped shim may take to exit before it is killed
STOP_GRACE_S = 5.0
#: how long the shim of a container the engine just removed may take to exit by itself: within it,
#: a shim still there is finishing its work, not stranded
SETTLE_S = 5.0


@dataclass(frozen=True)
class Stranded:
    container_id: str
    shim_pid: int
    #: (program, --root) of each sandbox process of that container (runsc-sandbox, runsc-gofer)
    sandboxes: tuple[tuple[str, str], ...]


def _command_lines(proc: Path = PROC) -> dict[int, list[str]]:
    lines = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:  # exited meanwhile
            continue
        if raw:
            lines[int(entry.name)] = raw.decode(errors="replace").rstrip("\0").split("\0")
    return lines


def shim_container(argv: list[str]) -> str | None:
    """The container id a containerd shim of the engine's namespace serves, None for anything else."""
    if not argv or "containerd-shim" not in Path(argv[0]).name:
        return None
    if _value(argv, "-namespace") != ENGINE_NAMESPACE:
        return None
    return _value(argv, "-id")


def _value(argv: list[str], flag: str) -> str | None:
    index = argv.index(flag) + 1 if flag in argv else len(argv)
    return argv[index] if index < len(argv) else None


def find(known_ids: set[str], proc: Path = PROC) -> list[Stranded]:
    """The engine's shims whose container is not among `known_ids` (every container the engine lists)."""
    lines = _command_lines(proc)
    found = []
    for pid, argv in lines.items():
        cid = shim_container(argv)
        if cid is None or cid in known_ids:
            continue
        sandboxes = tuple(
            (other[0], _root(other))
            for other in lines.values()
            if other[0].startswith("runsc-") and _mentions(other, cid)
        )
        found.append(Stranded(cid, pid, sandboxes))
    return found


def _mentions(argv: list[str], cid: str) -> bool:
    return any(cid in part for part in argv)


def _root(argv: list[str]) -> str:
    return next((part.split("=", 1)[1] for part in argv if part.startswith("--root=")), "")


def release(stranded: Stranded, runsc: str = "runsc") -> str:
    """Delete the sandbox through its runtime and stop the shim; what was done, in one line."""
    for root in sorted({root for _, root in stranded.sandboxes if root}):
        subprocess.run(
            [runsc, f"--root={root}", "delete", "--force", stranded.container_id],
            capture_output=True,
            timeout=30,
            check=False,
        )
    stop_pid(stranded.shim_pid, STOP_GRACE_S)
    return f"stranded shim {stranded.shim_pid} of container {stranded.container_id[:12]} (its engine had removed it)"


def settled(client, only: str | None = None, within_s: float = SETTLE_S) -> list[Stranded]:
    """The engine's shims still there without their container once `within_s` has passed (or
    none is left): a shim exits shortly after its container is removed, so one seen at once is not
    yet stranded. `only`: that container's shim alone."""
    deadline = time.monotonic() + within_s
    while True:
        known = {container.id for container in client.containers.list(all=True)}
        found = [item for item in find(known) if only is None or item.container_id == only]
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.2)


def release_all(client, only: str | None = None) -> list[str]:
    """Release every stranded shim of the engine `client` talks to (or only container `only`'s)."""
    return [release(item) for item in settled(client, only)]
