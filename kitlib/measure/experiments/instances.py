"""What the scale-out experiments share: N server instances in one environment, each in a home of
its own where the kind has containers, and their placement on the system under test's CPUs."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from kitlib.measure import capacity
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Workload


def homes(env: Environment, ports: Sequence[int]) -> list[Environment]:
    """Where instance i (serving ports[i]) runs: `env` for the first, a companion of it (its own
    container on Docker labels) for each other, or `env` again where the kind has no companions."""
    return [env if i == 0 else (env.companion(i, [port]) or env) for i, port in enumerate(ports)]


def sut_cpus(env: Environment) -> list[int]:
    """The CPUs instances are placed on: the layout's, or on a remote SUT (whose CPUs are not in the
    layout) every CPU its environment sees."""
    return list(env.layout.sut_cpus) or list(range(int(env.run(["nproc"], timeout=30).output.split()[-1])))


def containers(env: Environment, places: Sequence[Environment]) -> int:
    """How many containers the instances run in (0 where the environment is not Docker)."""
    return len({id(home) for home in places}) if env.kind == "docker" else 0


def place(places: Sequence[Environment], pids: Sequence[str], cpus: Sequence[int], placement: str) -> None:
    """Pin every thread of instance i to CPU i of `cpus` (modulo), or give them all `cpus` back."""
    for i, (pid, home) in enumerate(zip(pids, places, strict=True)):
        allowed = str(cpus[i % len(cpus)]) if placement == "pinned" else ",".join(map(str, cpus))
        home.run(["taskset", "-a", "-p", "-c", allowed, pid], timeout=30)


class ScaledOutWorkload(Workload):
    """A workload of `params.instances` servers, one port and one SUT CPU each, with their homes,
    PIDs (as their environment sees them) and the addresses the peer reaches them at."""

    #: the instances share the machine's CPUs: their aggregate moves with a host that slows them
    capacity_probe = capacity.CPU

    def __init__(self, params: BaseModel):
        super().__init__(params)
        self.sut_cores = params.instances
        self.ports_needed = params.instances
        self.targets: list[tuple[str, int]] = []
        self.pids: list[str] = []
        #: the environment each instance runs in: its own container on Docker labels, else the one
        self.homes: list[Environment] = []
        self.containers = 0


def at_once(jobs: Sequence[str], reports: Sequence[str]) -> str:
    """Shell: every job in the background at the same moment, one wall clock around all of them; when
    all have ended, each report (a section line and the job's output, kept under `$d`), then the wall
    time after `== elapsed` (`parsers.bundle` reads it). No trap of its own: a script that embeds it (the
    proxy's) keeps its EXIT trap. The jobs and reports are shell: their parts must be quoted already."""
    lines = ["set -u", "d=$(mktemp -d)", "pids=", "start=$(date +%s.%N)"]
    for job in jobs:
        lines += [f"{job} &", 'pids="$pids $!"']
    lines += ["wait $pids", "end=$(date +%s.%N)", *reports]
    lines.append('echo "== elapsed $(awk -v a="$start" -v b="$end" \'BEGIN { printf "%.6f", b - a }\')"')
    lines.append('rm -rf "$d"')
    return "\n".join(lines)
