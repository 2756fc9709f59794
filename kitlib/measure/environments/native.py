"""`native`: the system under test runs on this host itself, pinned with taskset."""

from __future__ import annotations

import platform
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kitlib.core import paths
from kitlib.core.procs import child_env, kill_group, pinned, run_bounded
from kitlib.measure.environments.base import Environment, Service
from kitlib.measure.host import commands


class LocalService(Service):
    """A background process in its own session, so stopping it stops all its children."""

    def __init__(self, name: str, proc: subprocess.Popen, log_path: Path):
        self.name = name
        self.proc = proc
        self.log_path = log_path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        kill_group(self.proc)

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class NativeEnvironment(Environment):
    kind = "native"

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._workdir: Path | None = None

    def start(self) -> None:
        root = paths.own_scratch_root()
        self._workdir = Path(tempfile.mkdtemp(prefix=f"{self.run_label}-native-", dir=root))
        (self._workdir / "data").mkdir()

    def _teardown(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def execute(self, argv: list[str], *, timeout: float, cpus: Sequence[int] | None) -> tuple[int | None, str]:
        return run_bounded(pinned(argv, cpus if cpus is not None else self.layout.sut_cpus), timeout=timeout)

    def spawn(self, name: str, argv: list[str]) -> Service:
        assert self._workdir is not None, "start() first"
        log_path = self._workdir / f"{name}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                pinned(argv, self.layout.sut_cpus),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=self._workdir,
                env=child_env(),
            )
        return LocalService(name, proc, log_path)

    def address_for_peer(self, port: int, peer_host_address: str) -> tuple[str, int]:
        return peer_host_address, port

    @property
    def data_dir(self) -> str:
        assert self._workdir is not None, "start() first"
        return str(self._workdir / "data")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "kernel": platform.release(), "filesystem": _filesystem_of(paths.scratch_root())}


def _filesystem_of(path: Path) -> str | None:
    found = shutil.which("stat")
    if not found:
        return None
    return commands.run([found, "-f", "-c", "%T", str(path)]).stdout.strip() or None
