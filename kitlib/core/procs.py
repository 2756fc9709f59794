"""Local processes with bounded time, killed as a whole process group when they overrun.

Every process the kit starts on this host carries KITLIB_OWNER=<pid of the run> in its environment,
so a load generator or server that outlives its run (kill -9, a lost namespace) is still found:
by the leftover checks of the tests and by `kit clean`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from kitlib.core import naming, paths, services

OWNER_VARIABLE = "KITLIB_OWNER"


#: variables that tune the libraries a benchmark loads (OpenMP, the BLAS libraries, glibc's allocator, the
#: dynamic loader's preloads): a caller's value changes what a native point measures while no container
#: or guest sees it. On a host exporting OPENBLAS_CORETYPE=Haswell, native Linpack ran OpenBLAS's AVX2
#: kernels at 110 GFLOPS beside Docker's AVX-512 ones at 178: "Docker 1.6× native" was the shell's doing.
TUNING_PREFIXES = ("OPENBLAS_", "GOTO_", "GOTOBLAS_", "OMP_", "GOMP_", "KMP_", "MKL_", "BLIS_", "NVPL_", "MALLOC_")
TUNING_NAMES = frozenset({"GLIBC_TUNABLES", "LD_PRELOAD", "LD_AUDIT", "LD_BIND_NOW"})


def is_tuning(name: str) -> bool:
    return name in TUNING_NAMES or name.startswith(TUNING_PREFIXES)


def tuning_left_out() -> dict[str, str]:
    """The tuning variables of this process's environment that no process the kit starts inherits
    (recorded in every run's provenance)."""
    return {k: v for k, v in sorted(os.environ.items()) if is_tuning(k)}


def child_env() -> dict[str, str]:
    """This process's environment without the libraries' tuning variables (`TUNING_PREFIXES`), so a native
    point loads its libraries as a container's does, marked with its pid as the owner of the child."""
    return {**{k: v for k, v in os.environ.items() if not is_tuning(k)}, OWNER_VARIABLE: str(os.getpid())}


def owned_processes() -> list[tuple[int, int, str]]:
    """(pid, owner pid, command) of every process on this host marked as started by a kit run: by its
    environment, or, where it rewrote that, by a working directory in the kit's scratch area."""
    marker = f"{OWNER_VARIABLE}=".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            variables = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # exited meanwhile, or not ours to read
            continue
        owner = next(
            (int(v[len(marker) :]) for v in variables if v.startswith(marker) and v[len(marker) :].isdigit()), None
        )
        if owner is None:  # a server that rewrote its environ for its title (redis-server): its run's folder
            owner = _owner_of_cwd(entry)
        if owner is not None:
            found.append((int(entry.name), owner, command))
    return found


def _owner_of_cwd(entry: Path) -> int | None:
    """The run owning a process whose working directory is one of the kit's scratch folders."""

    try:
        cwd = os.readlink(entry / "cwd")
    except OSError:
        return None
    root = str(paths.scratch_root())
    return naming.owner_pid(cwd[len(root) :]) if cwd.startswith(root + "/") else None


def run_bounded(argv: Sequence[str], *, timeout: float) -> tuple[int | None, str]:
    """Run argv to completion; return (returncode, stdout+stderr), or (None, output) on timeout."""
    returncode, output, _ = run_bounded_apart(argv, timeout=timeout, merge=True)
    return returncode, output


def run_bounded_apart(argv: Sequence[str], *, timeout: float, merge: bool = False) -> tuple[int | None, str, str]:
    """(returncode or None on timeout, stdout, stderr) of argv run in its own process group, marked
    as this run's, killed as a group at `timeout` (stderr into stdout with `merge`)."""
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge else subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=child_env(),
        text=True,
        errors="replace",
    )
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    try:
        output, errors = proc.communicate(timeout=timeout)
        return proc.returncode, output, errors or ""
    except subprocess.TimeoutExpired:
        kill_group(proc)
        output, errors = proc.communicate()
        return None, output, errors or ""
    except BaseException:
        kill_group(proc)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.pop(proc.pid, None)


#: the bounded commands running now, by pid: a command a worker thread waits on (a duet's other side) gets
#: no KeyboardInterrupt of its own, so the thread that does ends it (`kill_running`)
_LIVE: dict[int, subprocess.Popen] = {}
_LIVE_LOCK = threading.Lock()


def kill_running() -> int:
    """End every bounded command of this process still running, as a group each; how many there were."""
    with _LIVE_LOCK:
        running = list(_LIVE.values())
    for proc in running:
        kill_group(proc)
    return len(running)


def kill_group(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """SIGTERM the process group, then SIGKILL what is still there after `grace` seconds. The group, not
    only its leader: a process the leader left behind (a server put in the background) would otherwise
    outlive it, holding the output pipe a caller waits on."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()  # a reaped leader no longer counts as a member of its group
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def exited(pid: int) -> bool:
    """Whether `pid` has exited: gone, or a zombie its parent has not reaped yet (it runs nothing and
    holds nothing, while `pid_alive` still finds it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def wait_exited(pid: int, timeout: float) -> bool:
    """Until `pid` has exited, at most `timeout` seconds; whether it has."""
    deadline = time.monotonic() + timeout
    while not exited(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_pid(pid: int, grace: float, *, then_kill: Sequence[int] = ()) -> None:
    """SIGTERM `pid` (a server, a guest, a machine: each shuts down on it), then SIGKILL it and
    `then_kill` (what it may leave behind) if it has not exited after `grace` seconds. The one way the
    kit stops a process that is not its own child's group (for that: `kill_group`)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if wait_exited(pid, grace):
        return
    for victim in (*then_kill, pid):
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            continue
    wait_exited(pid, grace)


def pinned(argv: Sequence[str], cpus: Sequence[int] | None) -> list[str]:
    """Prefix argv with taskset when CPUs are given."""
    if not cpus:
        return list(argv)
    return ["taskset", "-c", ",".join(str(c) for c in cpus), *argv]


def loggable(argv: Sequence[str], limit: int = 256) -> list[str]:
    """argv as provenance records it: a program passed inline (`python3 -c SOURCE`) is named by its
    file and hash instead of being copied into every record."""

    return [arg if len(arg) <= limit else services.describe_source(arg) for arg in argv]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
