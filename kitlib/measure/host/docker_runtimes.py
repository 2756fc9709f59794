"""The OCI runtimes a Docker engine runs containers under (`+runtime=NAME`): which it lists, whether
each starts a container here, what it is (path, version, arguments, gVisor's platform), and the
engine configuration that registers the ones installed.

A runtime is named as the engine registered it, so `docker-host-volume+runtime=runsc` means whatever
`runsc` is in that engine's `daemon.json`; provenance records its path, arguments and version so the
label's meaning on the day is kept. gVisor's platform and network stack are runtime arguments, so
the set-up registers them explicitly: `runsc` (ptrace platform, gVisor's own network stack, netstack)
and `runsc-hostinet` (ptrace, the host kernel's network stack in the container's namespace).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core import naming
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import stranded_shims
from kitlib.measure.host.docker_engine import docker_client

#: the runtimes the set-up registers where installed: name -> (program, runtime arguments)
KIT_RUNTIMES: dict[str, tuple[str, list[str]]] = {
    "crun": ("crun", []),
    "runsc": ("runsc", ["--platform=ptrace"]),
    "runsc-hostinet": ("runsc", ["--platform=ptrace", "--network=host"]),
    "kata": ("kata-runtime", []),
}
#: what to install for a runtime's program where Debian's main archive has none
_INSTALL_HINTS = {
    "kata-runtime": "Kata Containers: Debian has only an experimental package; see katacontainers.io",
}
#: names an engine lists for its own shims, not runtimes a container is started under by name
_INTERNAL_PREFIX = "io.containerd."
#: how long one trial container may take to start, run `true` and go (gVisor's sandbox: seconds)
TRIAL_TIMEOUT_S = 60
#: the engine's default configuration file, where a user adds runtimes to an engine the kit did not start
SYSTEM_DAEMON_JSON = "/etc/docker/daemon.json"


@dataclass(frozen=True)
class RuntimeStatus:
    """One registered runtime: whether a container starts under it here, and why not."""

    name: str
    usable: bool
    reason: str
    facts: dict[str, Any] = field(default_factory=dict)


def registered(client) -> dict[str, dict[str, Any]]:
    """The engine's runtimes by name (`path`, `runtimeArgs`), without containerd's internal shims."""
    runtimes = client.info().get("Runtimes") or {}
    return {name: dict(spec or {}) for name, spec in runtimes.items() if not name.startswith(_INTERNAL_PREFIX)}


def unregistered(name: str, available: list[str] | None = None) -> str:
    """Why a runtime cannot be asked for: the engine does not list it (with what it lists)."""
    listed = f"; it lists: {', '.join(available)}" if available else ""
    hint = (
        f" (`make docker` registers it when it starts the engine; for an engine started otherwise add it to "
        f"{SYSTEM_DAEMON_JSON}: {json.dumps({'runtimes': {name: _registration(name)}})})"
        if name in KIT_RUNTIMES and shutil.which(KIT_RUNTIMES[name][0])
        else ""
    )
    return f"the Docker engine has no runtime {name!r}{listed}{hint}"


def missing_rows() -> dict[str, str]:
    """The kit's runtimes the engine does not list, and why: not installed, or not registered."""
    try:
        listed = registered(docker_client())
    except EnvironmentUnavailable:
        return {}
    reasons = {}
    for name, (program, _) in KIT_RUNTIMES.items():
        if name in listed:
            continue
        if shutil.which(program) is None:
            reasons[name] = f"{program} is not installed ({_INSTALL_HINTS.get(program, f'apt-get install {program}')})"
        else:
            reasons[name] = unregistered(name, sorted(listed))
    return reasons


def require_runtime(label: str, name: str, client, image: str) -> None:
    """Refuse a label whose runtime the engine does not list (naming the ones it has), or under which
    a container does not start here (tried once per process: a failed start can strand a sandbox)."""
    available = registered(client)
    if name not in available:
        raise EnvironmentUnavailable(f"{label}: {unregistered(name, sorted(available))}")
    status = _status(client.info().get("ID", ""), name, image, client)
    if not status.usable:
        raise EnvironmentUnavailable(f"{label}: runtime {name} is {status.reason}")


def facts(client, name: str) -> dict[str, Any]:
    """What provenance keeps of a runtime: its path, arguments, version and (gVisor) platform and network."""
    spec = registered(client).get(name, {})
    path = spec.get("path") or name
    arguments = list(spec.get("runtimeArgs") or [])
    found: dict[str, Any] = {"name": name, "path": path, "arguments": arguments, "version": program_version(path)}
    program = Path(path).name
    if program == "runsc":
        found["platform"] = _flag(arguments, "platform") or "ptrace"
        found["network"] = {"host": "host kernel (hostinet)", "none": "none"}.get(
            _flag(arguments, "network") or "sandbox", "gVisor netstack"
        )
    return found


def program_version(path: str) -> str | None:
    """The first line of `<runtime> --version` (runc, crun and runsc all print one), None if it fails."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    line = (done.stdout or done.stderr).strip().splitlines()
    return line[0] if done.returncode == 0 and line else None


def _flag(arguments: list[str], name: str) -> str | None:
    for i, argument in enumerate(arguments):
        if argument.startswith(f"--{name}="):
            return argument.split("=", 1)[1]
        if argument == f"--{name}" and i + 1 < len(arguments):
            return arguments[i + 1]
    return None


def statuses(image: str | None) -> list[RuntimeStatus]:
    """Each runtime the local engine lists, tried once per process with a container of `image` that
    runs `true` (None: not tried, for want of an image here)."""
    try:
        client = docker_client()
    except EnvironmentUnavailable:
        return []
    engine = client.info().get("ID", "")
    return [_status(engine, name, image, client) for name in sorted(registered(client))]


def _status(engine: str, name: str, image: str | None, client) -> RuntimeStatus:
    """A runtime's status on engine `engine`, tried once per process (remembered by engine, name, image)."""
    key = (engine, name, image)
    if key not in _TRIED:
        _TRIED[key] = _try(name, image, client)
    return _TRIED[key]


#: (engine id, runtime, image) -> its status: each runtime is tried once per process and engine
_TRIED: dict[tuple[str, str, str | None], RuntimeStatus] = {}


def _try(name: str, image: str | None, client) -> RuntimeStatus:
    found = facts(client, name)
    what = ", ".join(
        filter(None, [found["version"], *(f"{k} {found[k]}" for k in ("platform", "network") if k in found)])
    )
    if image is None:
        return RuntimeStatus(name, True, f"registered ({what}); not tried yet: no image here to try it with", found)
    error = trial(client, name, image)
    if error:
        return RuntimeStatus(
            name, False, f"registered but a container does not start under it: {explain(error)}", found
        )
    return RuntimeStatus(name, True, f"a container starts under it ({what})", found)


def trial(client, name: str, image: str) -> str | None:
    """Start, run `true` in and remove one container under runtime `name`; its error, or None.
    A runtime that fails after its sandbox started leaves a shim behind: it is released here."""
    import docker.errors

    labels = naming.docker_labels(naming.new_run_label())
    container = client.containers.create(image, ["true"], runtime=name, network_mode="none", labels=labels)
    error = None
    try:
        container.start()
        status = container.wait(timeout=TRIAL_TIMEOUT_S)
        if status.get("StatusCode") != 0:
            error = f"`true` exited {status.get('StatusCode')}: {container.logs().decode(errors='replace')[:200]}"
    except docker.errors.DockerException as exc:
        error = str(getattr(exc, "explanation", None) or exc)
    except Exception as exc:  # noqa: BLE001 - a wait that timed out: the runtime hangs
        error = f"no exit within {TRIAL_TIMEOUT_S} s ({type(exc).__name__})"
    finally:
        container.remove(force=True)
        stranded_shims.release_all(client, only=container.id)
    return error


#: errors of runtimes on some hosts, and what they mean there
_KNOWN_ERRORS = {
    "cgroups in hybrid mode not supported": (
        "crun refuses hybrid cgroups while a controller is left on cgroup v2 "
        "(`python -m kitlib.measure.host.docker_runtimes prepare`, run by `make docker`, binds it to v1; "
        "or boot with unified cgroups)"
    ),
    "cannot run with network enabled in root network namespace": (
        "gVisor's own network stack (netstack) does not start here: runsc takes the container's network "
        "namespace for the host's; `runsc-hostinet` runs gVisor with the host kernel's network stack"
    ),
}


def explain(error: str) -> str:
    """A runtime's error, with what it means where the kit knows."""
    first = error.strip().splitlines()[0][:300] if error.strip() else "no error text"
    for marker, meaning in _KNOWN_ERRORS.items():
        if marker in error:
            return f"{meaning} [{first}]"
    return first


# -- set-up: the engine's configuration, and cgroups crun can run on ------------------------------
def _registration(name: str) -> dict[str, Any]:
    program, arguments = KIT_RUNTIMES[name]
    entry: dict[str, Any] = {"path": shutil.which(program) or program}
    if arguments:
        entry["runtimeArgs"] = arguments
    return entry


def daemon_config() -> dict[str, Any]:
    """The engine configuration registering every runtime of `KIT_RUNTIMES` installed here."""
    runtimes = {name: _registration(name) for name, (program, _) in KIT_RUNTIMES.items() if shutil.which(program)}
    return {"runtimes": runtimes} if runtimes else {}


def stray_v2_controllers(cgroup_root: Path = Path("/sys/fs/cgroup")) -> list[str]:
    """Controllers a hybrid host leaves on cgroup v2 (crun then refuses to run); [] on a pure v1 or v2 host."""
    unified = cgroup_root / "unified" / "cgroup.controllers"
    if not unified.exists():
        return []
    return unified.read_text().split()


def bind_to_v1(controllers: list[str], cgroup_root: Path = Path("/sys/fs/cgroup")) -> list[str]:
    """Mount a v1 hierarchy for each controller left on v2 but unused there, as a hybrid host does for
    the others; what was bound, one line each. A controller in use on v2 is left (the mount fails)."""
    done = []
    for controller in controllers:
        target = cgroup_root / controller
        target.mkdir(exist_ok=True)
        mounted = subprocess.run(
            ["mount", "-t", "cgroup", "-o", controller, "cgroup", str(target)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if mounted.returncode == 0:
            done.append(f"bound the {controller} controller to cgroup v1 at {target} (crun runs on hybrid cgroups)")
        else:
            done.append(f"left the {controller} controller on cgroup v2: {mounted.stderr.strip()[:200]}")
    return done


def prepare(config: Path) -> list[str]:
    """Write the engine configuration to `config` and ready hybrid cgroups for crun; what was done."""
    done = []
    if shutil.which("crun"):
        done += bind_to_v1(stray_v2_controllers())
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(daemon_config(), indent=1) + "\n")
    names = ", ".join(daemon_config().get("runtimes", {})) or "none installed"
    done.append(f"engine configuration {config}: runtimes {names}")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kitlib.measure.host.docker_runtimes", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prepare_parser = sub.add_parser("prepare", help="write the engine configuration; bind stray cgroup controllers")
    prepare_parser.add_argument("config", type=Path)
    args = parser.parse_args(argv)
    for line in prepare(args.config):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
