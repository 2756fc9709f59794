"""`kit fleet install`: this project, as a clone of it holds it, brought to every host of an SSH fleet
and set up there by its own Makefile, over the connections `kit fleet run` uses.

Each host's `kit` must be `<folder>/.venv/bin/kit` (the fleet file says where the kit will be); the
project's tracked files (`git ls-files`, or the folder without its environment, results and figures
where it is no clone) are packed here, copied into `<folder>`, unpacked and set up with `make setup`
(system packages as root, the Python environment, a Docker engine started) or, with `only_python`,
`make course` (the Python environment alone). Hosts are installed at once; one that fails is named with
the last words of its `make` and never stops the others. Every string reaches the remote shell quoted.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable, PlanError
from kitlib.fleet_outcome import failure_reason, last_words
from kitlib.measure.host import ssh

#: what a project folder holds that is not the project: its environment, its runs and their drawings
NOT_THE_PROJECT = {".venv", ".conda-env", ".git", "results", "figures", "__pycache__", ".pytest_cache"}
#: how long unpacking, and the set-up itself (system packages, a Python environment), may take
UNPACK_TIMEOUT_S, SETUP_TIMEOUT_S = 300.0, 3600.0
ENV_SUFFIX = "/.venv/bin/kit"


def install_folder(kit: str) -> str:
    """The folder a host's kit will be installed in: `<folder>` of `<folder>/.venv/bin/kit`."""
    if not kit.endswith(ENV_SUFFIX) or kit == ENV_SUFFIX:
        raise PlanError(f"fleet install: kit = {kit!r} must be <folder>{ENV_SUFFIX}, the folder to install in")
    return kit.removesuffix(ENV_SUFFIX)


def project_files(root: Path) -> list[Path]:
    """The project's files, relative to `root`: those git tracks in a clone, else every file outside
    the environment, runs and drawings."""
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, timeout=60, check=False
        )
        if listed.returncode == 0:
            return [Path(name) for name in listed.stdout.decode().split("\0") if name and (root / name).is_file()]
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file() and not NOT_THE_PROJECT & set(p.relative_to(root).parts)
    )


def pack(root: Path, into: Path) -> int:
    """A gzip tar of the project's files; how many."""
    files = project_files(root)
    with tarfile.open(into, "w:gz") as archive:
        for name in files:
            archive.add(root / name, arcname=str(name), recursive=False)
    return len(files)


def install(
    fleet, only_python: bool = False, say: Callable[[str], None] = print, root: Path | None = None
) -> list[tuple[str, str, str]]:
    """Install on every host of `fleet` (an SSH fleet) at once; (host, 'done' | 'failed', what happened)."""
    if fleet.backend != "ssh":
        raise PlanError("fleet install: only an SSH fleet's hosts are reached from here (a cluster's nodes share one)")
    folders = {host.label: install_folder(host.kit) for host in fleet.hosts}
    root = root or paths.PROJECT_ROOT
    with tempfile.TemporaryDirectory(prefix="kit-install-") as scratch:
        archive = Path(scratch) / "kit.tar.gz"
        count = pack(root, archive)
        say(f"fleet install: {count} files of {root} ({archive.stat().st_size / 1e6:.1f} MB) to {len(folders)} host(s)")
        target = "course" if only_python else "setup"
        with ThreadPoolExecutor(max_workers=len(fleet.hosts), thread_name_prefix="install") as pool:
            futures = [
                pool.submit(_one, fleet, host, folders[host.label], archive, target, say) for host in fleet.hosts
            ]
            return [future.result() for future in futures]


def _one(fleet, host, folder: str, archive: Path, target: str, say: Callable[[str], None]) -> tuple[str, str, str]:
    begun = time.monotonic()
    try:
        connection = fleet.connect(host)
        try:
            remote = f"{folder}/.kit-install.tar.gz"
            _checked(connection, ["mkdir", "-p", folder], UNPACK_TIMEOUT_S, "mkdir")
            connection.put(str(archive), remote=remote)
            _checked(connection, ["tar", "-xzf", remote, "-C", folder], UNPACK_TIMEOUT_S, "tar")
            _checked(connection, ["rm", "-f", remote], UNPACK_TIMEOUT_S, "rm")
            say(f"{host.label}: unpacked into {folder}; make {target} …")
            _checked(connection, ["make", "-C", folder, target], SETUP_TIMEOUT_S, f"make {target}")
            version = _checked(
                connection,
                [f"{folder}/.venv/bin/python", "-c", "import kitlib; print(kitlib.__version__)"],
                UNPACK_TIMEOUT_S,
                "the installed kit",
            ).strip()
        finally:
            connection.close()
        said = f"kit {version} in {folder} ({time.monotonic() - begun:.0f} s)"
        say(f"{host.label}: installed: {said}")
        return host.label, "done", said
    except Exception as exc:  # the kit's, the system's and the SSH libraries' errors alike: this host's
        reason = failure_reason(exc)
    say(f"{host.label}: FAILED: {reason}")
    return host.label, "failed", reason


def _checked(connection, argv: list[str], timeout: float, what: str) -> str:
    code, said = ssh.run(connection, argv, timeout)
    if code is None:
        raise EnvironmentUnavailable(f"{what} overran {timeout:.0f} s")
    if code != 0:
        raise EnvironmentUnavailable(f"{what} exited {code}: {last_words(said)}")
    return said
