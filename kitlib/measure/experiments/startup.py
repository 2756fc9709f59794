"""Start-up time (paper §II and its conclusion: a container starts in well under a second, a VM
boots in about 11 s): how long a fresh environment takes from "start" to ready for commands.

Each repetition creates one more environment of the label under test beside the one the run
holds, times its start, runs one command in it, and times its removal. Ready means: for Docker,
the container runs and answers `docker exec`; for a VM, the guest answers SSH (its boot-to-ready
time, QEMU start to SSH, is recorded apart from the preparation of its disk copy and keys).
"""

from __future__ import annotations

import json
import time
from typing import Any

from kitlib.core import naming
from kitlib.core.records import Measurement
from kitlib.measure import environments
from kitlib.measure.environments.base import Environment
from kitlib.measure.experiments.base import Experiment, RawResult, Workload
from kitlib.measure.peer import Peer
from kitlib.specs.startup import SPEC


class StartupWorkload(Workload):
    name = "startup"
    tool = "kit-startup"
    sut_cores = 1

    def points(self) -> list[dict[str, Any]]:
        return [{}]

    def applies_to(self, env_label: str) -> bool:
        return environments.parse_label(env_label).kind != "native"

    def measure(self, env: Environment, peer: Peer, point: dict[str, Any]) -> RawResult:
        options: dict[str, Any] = {"image": getattr(env, "image", None)}
        fresh = environments.create(
            env.label, env.layout, run_label=naming.new_run_label(), peer_reaches_nat=peer.reaches_nat, **options
        )
        started = time.monotonic()
        with fresh:
            ready = time.monotonic() - started
            fresh.run(["true"], timeout=60)
            first_command = time.monotonic() - started - ready
            boot = getattr(fresh, "boot_to_ready_s", None)
            stopping = time.monotonic()
        removed = time.monotonic() - stopping
        timings = {"start_to_ready": ready, "first_command": first_command, "remove": removed}
        if boot is not None:
            timings["boot_to_ready"] = boot
        extra = [Measurement(metric, round(value, 4), "s") for metric, value in timings.items()]
        return RawResult(outputs={"timings": json.dumps(timings, indent=1)}, extra=extra)

    def parse(self, raw: RawResult, source: str) -> list[Measurement]:
        """The kit timed these itself; the saved `timings` file holds the same numbers."""
        return list(raw.extra)


EXPERIMENT = Experiment(
    spec=SPEC,
    make_workloads=lambda params: [StartupWorkload(params)],
)
