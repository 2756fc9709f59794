"""The fleet's Slurm backend: one plan on the nodes of a cluster as an exclusive job array, one task per
node, each task measuring its node and bundling its run; the bundles come back through the filesystem
the nodes and this machine share.

    # fleet.toml
    backend = "slurm"
    [slurm]
    nodes = 4                              # tasks of the job array, one node each (--exclusive)
    results = "/shared/kit-fleet"          # a folder this machine and every node see
    kit = "/shared/kit/.venv/bin/kit"      # the kit on the nodes (default: `kit` on their PATH)
    partition = "bench"                    # optional; the cluster's default otherwise
    account = "lab"                        # optional
    queue_timeout = "1h"                   # how long the tasks may wait to start (default 1h)

The job is submitted with `sbatch` (to the cluster `SLURM_CONF` or the default configuration names) and
followed with `squeue` while it runs; each task's end state (COMPLETED, FAILED, CANCELLED, TIMEOUT,
NODE_FAIL) comes from `scontrol show job` (`sacct` needs the accounting daemon, which many clusters
and every small one lack). Each task writes the node it ran on and its exit status beside its run, so a
task that failed, was cancelled or lost its node is named with its state and what its kit said, and
the others' bundles still come back. `--time` is the fleet's per-host timeout, enforced by Slurm; a
task still queued after `queue_timeout`, or a job this process stops following (Ctrl-C, SIGTERM), is
cancelled: a cancelled task's kit gets SIGTERM and cleans up. Every string reaches the job's shell quoted.
"""

from __future__ import annotations

import math
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kitlib.core import hostnames
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.core.parameters import as_seconds
from kitlib.fleet_outcome import Outcome, last_words
from kitlib.results import bundles

TOOLS = ("sbatch", "squeue", "scontrol", "scancel")
#: how often the job is looked at while it runs, and how long a cancelled job may take to end
POLL_S, CANCEL_WAIT_S = 2.0, 120.0
#: Slurm's own bounds on a command's answer (a controller that does not answer is an error, not a wait)
COMMAND_TIMEOUT_S = 60.0


class SlurmSettings(BaseModel):
    """Where a fleet's job array runs and how it finds the kit and its results."""

    model_config = ConfigDict(extra="forbid")

    nodes: int = Field(ge=1, le=1000, description="tasks of the job array, one node each (--exclusive)")
    results: str = Field(description="a folder on a filesystem this machine and every node see")
    kit: str = Field("kit", description="the kit command on the nodes: `kit` on their PATH or an absolute path")
    partition: str | None = Field(None, description="the partition (default: the cluster's)")
    account: str | None = Field(None, description="the account charged (default: the user's)")
    queue_timeout: str = Field("1h", description="how long the tasks may wait in the queue to start")

    _results = field_validator("results")(classmethod(lambda cls, value: hostnames.remote_path(value)))
    _kit = field_validator("kit")(
        classmethod(lambda cls, value: value if value == "kit" else hostnames.remote_path(value))
    )
    _names = field_validator("partition", "account")(classmethod(lambda cls, value: hostnames.name(value)))

    @field_validator("queue_timeout")
    @classmethod
    def _duration(cls, value: str) -> str:
        as_seconds("queue_timeout", value)
        return value


def task_script(settings: SlurmSettings, folder: Path, experiment: str, options: list[str]) -> str:
    """The job array's script: each task runs the kit into its own folder, bundles the run, and writes
    the node it ran on and how it ended (`run N` or `bundle N`) beside it."""
    q = shlex.quote
    run = " ".join(q(a) for a in [settings.kit, "run", experiment, "--no-notebook", *options])
    bundle = " ".join(q(a) for a in [settings.kit, "bundle"]) + f' "$dir"/{q(experiment)} -o "$dir"/bundle.tar.gz'
    return "\n".join(
        [
            "#!/bin/sh",
            f'dir={q(str(folder))}/task-"${{SLURM_ARRAY_TASK_ID:?}}"',
            'mkdir -p "$dir" && printf \'%s\\n\' "${SLURMD_NODENAME:-}" > "$dir"/node || exit 70',
            f'KIT_RESULTS="$dir" {run} > "$dir"/kit.log 2>&1',
            "code=$? step=run",
            f'if [ "$code" -eq 0 ]; then {bundle} >> "$dir"/kit.log 2>&1; code=$? step=bundle; fi',
            'printf \'%s %s\\n\' "$step" "$code" > "$dir"/exit',
            'exit "$code"',
            "",
        ]
    )


def submit(settings: SlurmSettings, folder: Path, script: Path, label: str, timeout_s: float) -> str:
    """sbatch the array; its job id."""
    argv = ["sbatch", "--parsable", f"--array=0-{settings.nodes - 1}", "--exclusive", "--nodes=1", "--ntasks=1"]
    argv += [f"--job-name=kit-fleet-{label}", f"--output={folder}/slurm-%a.out", f"--chdir={folder}"]
    argv += [f"--time={max(1, math.ceil(timeout_s / 60))}"]
    argv += [f"--partition={settings.partition}"] if settings.partition else []
    argv += [f"--account={settings.account}"] if settings.account else []
    said = _slurm([*argv, str(script)])
    job = said.strip().split(";")[0]
    if not job.isdigit():
        raise EnvironmentUnavailable(f"sbatch gave no job id: {said.strip()[:300]}")
    return job


def queued(job: str) -> dict[int, tuple[str, str]]:
    """Each task still listed by squeue: array index -> (state, node or reason)."""
    said = _slurm(["squeue", "-h", "-r", "-j", job, "-o", "%K|%T|%N|%r"], missing_ok=True)
    found = {}
    for line in said.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and parts[0].isdigit():
            found[int(parts[0])] = (parts[1], parts[2] or parts[3])
    return found


def end_states(job: str) -> dict[int, tuple[str, str, str, float]]:
    """Each task's end as the controller remembers it: array index -> (state, node, exit code, seconds
    it ran)."""
    said = _slurm(["scontrol", "-o", "show", "job", job], missing_ok=True)
    found = {}
    for line in said.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("ArrayTaskId", "").isdigit():
            found[int(fields["ArrayTaskId"])] = (
                fields.get("JobState", "UNKNOWN"),
                fields.get("NodeList", ""),
                fields.get("ExitCode", ""),
                run_seconds(fields.get("RunTime", "")),
            )
    return found


def run_seconds(text: str) -> float:
    """Slurm's `[days-]hours:minutes:seconds` as seconds; NaN where it says none."""
    days, _, clock = text.rpartition("-")
    parts = clock.split(":")
    if not all(p.isdigit() for p in parts) or not 1 <= len(parts) <= 3 or (days and not days.isdigit()):
        return math.nan
    seconds = 0
    for part in parts:
        seconds = seconds * 60 + int(part)
    return seconds + 86400 * int(days or 0)


def cancel(job: str) -> None:
    """scancel the job and wait, bounded, until no task of it is listed: each kit has cleaned up."""
    _slurm(["scancel", job], missing_ok=True)
    deadline = time.monotonic() + CANCEL_WAIT_S
    while queued(job) and time.monotonic() < deadline:
        time.sleep(POLL_S)


@dataclass
class _Follow:
    """The job's tasks as last seen, and what changed, for the progress lines."""

    job: str
    say: Callable[[str], None]
    seen: dict[int, tuple[str, str]] = field(default_factory=dict)

    def look(self) -> bool:
        """Look at the queue once; whether any task is still listed."""
        now = queued(self.job)
        for index, state in sorted(now.items()):
            if self.seen.get(index) != state:
                self.say(f"slurm {self.job}_{index}: {state[0].lower()} ({state[1]})")
        self.seen = now
        return bool(now)


def run(
    settings: SlurmSettings,
    experiment: str,
    options: list[str],
    output: Path,
    label: str,
    timeout_s: float,
    say: Callable[[str], None],
) -> list[Outcome]:
    """Submit the array, follow it to its end, bring back and verify each task's bundle."""
    absent = [tool for tool in TOOLS if not shutil.which(tool)]
    if absent:
        raise EnvironmentUnavailable(f"the Slurm backend needs {', '.join(absent)} here (Debian: slurm-client)")
    folder = Path(settings.results) / label
    folder.mkdir(parents=True, exist_ok=False)
    script = folder / "task.sh"
    script.write_text(task_script(settings, folder, experiment, options))
    script.chmod(0o755)
    job = submit(settings, folder, script, label, timeout_s)
    say(f"slurm: job {job}, {settings.nodes} task(s) of {experiment} into {folder}")
    follow = _Follow(job, say)
    queue_deadline = time.monotonic() + as_seconds("queue_timeout", settings.queue_timeout)
    run_deadline = queue_deadline + timeout_s + CANCEL_WAIT_S  # Slurm's --time ends a task before this
    overran = ""
    try:
        while follow.look():
            waiting = [i for i, (state, _) in follow.seen.items() if state == "PENDING"]
            if waiting and time.monotonic() > queue_deadline:
                overran = f"still queued after {settings.queue_timeout} (cancelled)"
                cancel(job)
                break
            if time.monotonic() > run_deadline:
                overran = "not ended in time (cancelled)"
                cancel(job)
                break
            time.sleep(POLL_S)
    except BaseException:
        cancel(job)  # nothing of this fleet run is left queued or running
        raise
    states = end_states(job)
    return _outcomes(settings, job, folder, output, states, overran)


def _outcomes(
    settings: SlurmSettings,
    job: str,
    folder: Path,
    output: Path,
    states: dict[int, tuple[str, str, str, float]],
    overran: str,
) -> list[Outcome]:
    outcomes, names, machines = [], set(), set()
    for index in range(settings.nodes):
        task = folder / f"task-{index}"
        state, listed_node, exit_code, ran = states.get(index, ("no longer listed by the controller", "", "", math.nan))
        node = _read(task / "node") or listed_node
        name = node if hostnames.is_name(node) and node not in names else f"task-{index}"
        names.add(name)
        outcome = Outcome(name, f"slurm {job}_{index}" + (f" on {node}" if node else ""))
        outcome.seconds = 0.0 if math.isnan(ran) else ran
        ended = _read(task / "exit")
        bundle = task / "bundle.tar.gz"
        try:
            if state == "COMPLETED" and ended == "bundle 0" and bundle.is_file():
                local = output / f"{name}.tar.gz"
                shutil.copyfile(bundle, local)
                found = bundles.verify(local)
                outcome.status, outcome.bundle = "done", local
                outcome.runs = [f"{e}/{r}" for e, r in found.runs]
            else:
                said = f"kit {ended}" if ended else "no exit status written"
                tail = _tail(task / "kit.log")
                outcome.status = "failed"
                outcome.reason = f"task {state}{f' (exit {exit_code})' if exit_code else ''}; {said}"
                outcome.reason += f"; {overran}" if overran else ""
                outcome.reason += f": {tail}" if tail else ""
        except Exception as exc:  # a bundle that does not verify: named, the others unaffected
            outcome.status, outcome.reason = "failed", f"{type(exc).__name__}: {exc}"
        if outcome.status == "done" and node in machines:
            outcome.reason = f"ran on {node} as an earlier task did: the same machine, not another"
        machines.add(node)
        outcomes.append(outcome)
    return outcomes


def _slurm(argv: list[str], missing_ok: bool = False) -> str:
    """A Slurm command's output; an error naming it when it fails (a job no longer known is no error
    where `missing_ok`)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise EnvironmentUnavailable(f"{argv[0]}: no answer within {COMMAND_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        if missing_ok and "Invalid job id" in done.stderr:
            return ""
        raise EnvironmentUnavailable(f"{argv[0]} exited {done.returncode}: {done.stderr.strip()[:400]}")
    return done.stdout


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _tail(path: Path, lines: int = 6) -> str:
    return last_words(_read(path), lines)
