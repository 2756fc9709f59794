"""`kit fleet run`: one plan on every machine of a fleet at once, each measuring itself, each run coming
back as a verified bundle.

    # fleet.toml
    backend = "ssh"                         # the lab's own machines, reached over SSH
    [ssh]
    key = "~/.ssh/kit_ed25519"              # private key for every host (optional: the SSH agent's)
    known_hosts = "~/.ssh/kit_known_hosts"  # host keys are pinned: every host must be in it
    [[hosts]]
    name = "lab-a"                          # how outcomes and bundles are named (default: host)
    host = "10.0.0.2"
    user = "root"
    kit = "/opt/kit/.venv/bin/kit"          # the kit on that host (default: `kit` on its PATH)
    results = "/var/tmp/kit-fleet"          # where its runs are kept there (default: /var/tmp/kit-fleet)

Every host runs `kit run EXPERIMENT --no-notebook [options]` on itself, its own peer included (a fleet
host is a machine measuring itself, not a system under test of this one), into a folder of its own for
this fleet run, then `kit bundle`s the run; the bundle is copied back over the same connection and
verified here (`kitlib.results.bundles.verify`). Hosts run at once, one thread each; a host that fails,
overruns or is lost is named with its reason and never stops the others. Whatever ends the connection
(this process stopped, the network lost) stops the host's run with SIGTERM, so that it cleans up after
itself: nothing is left running there. Every string reaches the remote shell quoted.

`kit fleet install` brings the kit to an SSH fleet's hosts first (`kitlib.fleet_install`).

The other backend, `backend = "slurm"`, runs the same plan as a job array on a cluster's nodes
(`kitlib.slurm`, where its fleet file is described).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kitlib import slurm as slurm_backend
from kitlib.core import hostnames, naming
from kitlib.core.errors import EnvironmentUnavailable, PlanError
from kitlib.fleet_outcome import Outcome, failure_reason, last_words
from kitlib.measure import inventory
from kitlib.measure.host import ssh
from kitlib.results import bundles

#: options of `kit run` a fleet decides itself: each host measures itself, with its own peer
FLEET_DECIDES = ("--sut-host", "--peer-host", "--hosts", "--sut-address", "--no-notebook")
#: how long a host may take to bundle its run and how long copying it back may take
BUNDLE_TIMEOUT_S = 600.0
#: the remote wrapper: the kit in the background, stopped with SIGTERM when the connection's input
#: ends (the controller gone or the link lost); its exit status is the kit's
WATCHED = (
    'exec 3<&0; "$@" </dev/null & pid=$!; '
    '( cat <&3 >/dev/null 2>&1; kill -TERM "$pid" 2>/dev/null ) >/dev/null 2>&1 & watcher=$!; '
    'exec 3<&-; wait "$pid"; code=$?; kill "$watcher" 2>/dev/null; exit "$code"'
)

#: the remote check of a host's results folder ($1): made 0700 where missing, refused (exit 3, why on
#: stdout) where it is a link, not a folder, another user's, or writable by group or others, as
#: `kitlib.core.owned_files.private_dir` refuses a local one (/var/tmp is every user's)
PRIVATE_ROOT = (
    'd=$1; mkdir -p -- "$(dirname -- "$d")" && { mkdir -m 700 -- "$d" 2>/dev/null; true; } || exit 3; '
    'if [ -L "$d" ] || [ ! -d "$d" ]; then echo "$d is not a folder (a link or a file stands there)"; exit 3; fi; '
    'owner=$(stat -c %u -- "$d"); if [ "$owner" != "$(id -u)" ]; then '
    'echo "$d is owned by uid $owner, not $(id -u)"; exit 3; fi; '
    'case $(stat -c %A -- "$d") in ?????w????|????????w?) '
    'echo "$d may be written by others (mode $(stat -c %a -- "$d"))"; exit 3;; esac'
)
#: how long the check of a host's results folder may take
PREPARE_TIMEOUT_S = 60.0


class FleetHost(inventory.Machine):
    """One machine of the fleet, reached over SSH, running the kit installed there."""

    name: str | None = Field(None, description="how outcomes and bundles are named (default: the host)")
    kit: str = Field("kit", description="the kit command on that host: `kit` on its PATH or an absolute path")
    results: str = Field("/var/tmp/kit-fleet", description="folder its fleet runs are kept in, there")

    _name = field_validator("name")(classmethod(lambda cls, value: hostnames.name(value)))
    _kit = field_validator("kit")(
        classmethod(lambda cls, value: value if value == "kit" else hostnames.remote_path(value))
    )
    _results = field_validator("results")(classmethod(lambda cls, value: hostnames.remote_path(value)))

    @property
    def label(self) -> str:
        return self.name or self.host


class Fleet(BaseModel):
    """The machines of a fleet run and how they are reached."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["ssh", "slurm"] = "ssh"
    ssh: inventory.SshSettings | None = None
    hosts: list[FleetHost] = Field(default_factory=list)
    slurm: slurm_backend.SlurmSettings | None = None

    @model_validator(mode="after")
    def _unique(self) -> Fleet:
        if self.backend == "slurm":
            if self.slurm is None or self.ssh is not None or self.hosts:
                raise ValueError('backend = "slurm" takes a [slurm] table and neither [ssh] nor [[hosts]]')
            return self
        if self.ssh is None or not self.hosts or self.slurm is not None:
            raise ValueError('backend = "ssh" takes an [ssh] table and at least one [[hosts]], no [slurm]')
        labels = [h.label for h in self.hosts]
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise ValueError(f"every host needs a name of its own; named twice: {twice}")
        return self

    def connect(self, host: FleetHost):
        """An open SSH connection to one of its hosts, with the fleet's key and pinned host keys."""
        key = str(self.ssh.key) if self.ssh.key else None
        return ssh.connect(host.target, key_filename=key, known_hosts=str(self.ssh.known_hosts))


def load(path: str | Path) -> Fleet:
    """A validated fleet file, or PlanError naming the file, the key and what is wrong."""
    path = Path(path).expanduser()
    fleet = inventory.read_model(path, Fleet, "fleet", "fleet file")
    if fleet.backend == "slurm":
        return fleet
    base = path.parent
    settings = fleet.ssh.model_copy(
        update={
            "key": (base / Path(fleet.ssh.key).expanduser()) if fleet.ssh.key else None,
            "known_hosts": base / Path(fleet.ssh.known_hosts).expanduser(),
        }
    )
    for name, found in (("ssh.key", settings.key), ("ssh.known_hosts", settings.known_hosts)):
        if found is not None and not Path(found).is_file():
            raise PlanError(f"fleet: {path}: {name} {found} does not exist")
    return fleet.model_copy(update={"ssh": settings})


def checked_run_options(options: list[str]) -> list[str]:
    """`kit run` options every host is given, refused here when the fleet decides them itself."""
    for option in options:
        if option.split("=", 1)[0] in FLEET_DECIDES:
            raise PlanError(f"fleet: {option.split('=', 1)[0]} is the fleet's to decide (each host measures itself)")
    return list(options)


class _Connections:
    """The fleet's open connections, so that a stop here closes them all (their runs then stop too)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[Any] = []

    def add(self, connection: Any) -> None:
        with self._lock:
            self._open.append(connection)

    def close_all(self) -> None:
        with self._lock:
            found, self._open = self._open, []
        for connection in found:
            try:
                connection.close()
            except Exception:  # already closed by its own thread
                pass


def run(
    fleet: Fleet,
    experiment: str,
    options: list[str],
    output: Path,
    *,
    timeout_s: float = 6 * 3600.0,
    say: Callable[[str], None] = print,
) -> list[Outcome]:
    """Run `kit run EXPERIMENT --no-notebook OPTIONS` on every host (or Slurm node) at once; bring each
    run back as a bundle under `output` (`<host>.tar.gz`, verified). Returns every host's outcome, in the
    fleet's order (the job array's, under Slurm)."""
    options = checked_run_options(options)
    output.mkdir(parents=True, exist_ok=True)
    label = naming.new_run_label()
    if fleet.backend == "slurm":
        outcomes = slurm_backend.run(fleet.slurm, experiment, options, output, label, timeout_s, say)
    else:
        outcomes = _over_ssh(fleet, experiment, options, output, label, timeout_s, say)
    record = {"experiment": experiment, "options": options, "label": label, "backend": fleet.backend}
    record["hosts"] = [o.as_dict() for o in outcomes]
    (output / "fleet.json").write_text(json.dumps(record, indent=2) + "\n")
    return outcomes


def _over_ssh(
    fleet: Fleet,
    experiment: str,
    options: list[str],
    output: Path,
    label: str,
    timeout_s: float,
    say: Callable[[str], None],
) -> list[Outcome]:
    """Every host's part at once, one thread each, over its own connection."""
    outcomes = [Outcome(h.label, h.target) for h in fleet.hosts]
    connections = _Connections()
    pool = ThreadPoolExecutor(max_workers=len(fleet.hosts), thread_name_prefix="fleet")
    try:
        jobs = [
            _Job(fleet, host, outcome, experiment, options, output, label, timeout_s, say, connections)
            for host, outcome in zip(fleet.hosts, outcomes, strict=True)
        ]
        for future in [pool.submit(job.run) for job in jobs]:
            future.result()
    except BaseException:
        connections.close_all()  # each host's run sees its input end and stops itself
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return outcomes


@dataclass
class _Job:
    """One host's part of a fleet run; every failure ends in its outcome, never in another host's."""

    fleet: Fleet
    host: FleetHost
    outcome: Outcome
    experiment: str
    options: list[str]
    output: Path
    label: str
    timeout_s: float
    say: Callable[[str], None]
    connections: _Connections

    def run(self) -> None:
        host, outcome, say = self.host, self.outcome, self.say
        begun = time.monotonic()
        try:
            self._measure_and_fetch()
            outcome.status = "done"
            say(
                f"{host.label}: done in {time.monotonic() - begun:.0f} s: {', '.join(outcome.runs)} -> {outcome.bundle}"
            )
        except Exception as exc:  # the kit's, the system's and the SSH libraries' errors alike: this host's
            outcome.status, outcome.reason = "failed", failure_reason(exc)
            say(f"{host.label}: FAILED: {outcome.reason}")
        finally:
            outcome.seconds = time.monotonic() - begun

    def _measure_and_fetch(self) -> None:
        fleet, host, outcome, experiment, label = self.fleet, self.host, self.outcome, self.experiment, self.label
        connection = fleet.connect(host)
        self.connections.add(connection)
        try:
            code, said = ssh.run(connection, ["sh", "-c", PRIVATE_ROOT, "sh", host.results], PREPARE_TIMEOUT_S)
            if code != 0:
                raise EnvironmentUnavailable(f"its results folder is refused: {last_words(said) or 'no answer'}")
            folder = f"{host.results}/{label}"
            self.say(f"{host.label}: running {experiment} into {folder}")
            argv = ["env", f"KIT_RESULTS={folder}", host.kit, "run", experiment, "--no-notebook", *self.options]
            code, said = ssh.run(connection, ["sh", "-c", WATCHED, "sh", *argv], self.timeout_s)
            if not ssh.alive(connection):
                lost = f"lost the connection during kit run (no answer for {ssh.LOST_AFTER_S:.0f} s)"
                raise EnvironmentUnavailable(f"{lost}: {last_words(said) or 'no output'}")
            if code is None:
                raise EnvironmentUnavailable(f"kit run overran {self.timeout_s:.0f} s (stopped): {last_words(said)}")
            if code != 0:
                raise EnvironmentUnavailable(f"kit run exited {code}: {last_words(said)}")
            remote_bundle = f"{folder}/{host.label}.tar.gz"
            bundled = [host.kit, "bundle", f"{folder}/{experiment}", "-o", remote_bundle]
            code, said = ssh.run(connection, bundled, BUNDLE_TIMEOUT_S)
            if code != 0:
                raise EnvironmentUnavailable(f"kit bundle exited {code}: {last_words(said)}")
            local = self.output / f"{host.label}.tar.gz"
            connection.get(remote_bundle, local=str(local))
            found = bundles.verify(local)
            outcome.bundle, outcome.runs = local, [f"{e}/{r}" for e, r in found.runs]
        finally:
            connection.close()
