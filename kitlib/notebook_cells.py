"""The parameters every experiment notebook shares, declared once: where the plan comes from, the
profile, the machines and where results go. Each notebook's `parameters` cell begins with the block
`shared_block` writes (a unit test holds every notebook to it) and goes on with the experiment's own
parameters; `plan_arguments` takes both back out of the notebook's namespace for `kitlib.plan`, so
no notebook spells the list again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kitlib import specs
from kitlib.specs.base import Spec

HEADER = "# Parameters (None = the profile's value). Profiles: quick | standard | paper."


@dataclass(frozen=True)
class Shared:
    name: str
    default: str  # as Python source
    comment: str


SHARED = (
    Shared("plan_file", "None", "a plan.json written by kit run; when set it decides every value below"),
    Shared("environments", "None", "None: {defaults}"),
    Shared("profile", '"quick"', "quick | standard | paper: sizes and durations"),
    Shared("repetitions", "None", "runs per point; None: from the profile"),
    Shared("preset", "None", "a named parameter set: {presets}"),
    Shared("peer", '"auto"', "auto | netns | loopback | remote: where the load generator runs"),
    Shared("peer_host", "None", "SSH host of a remote load generator (user@host:port)"),
    Shared("sut_address", "None", "address the peer reaches the system under test at (IP or host name)"),
    Shared("sut_host", "None", "run native on this SSH host (user@host:port)"),
    Shared("ssh_key", "None", "SSH private key for remote hosts (path)"),
    Shared("known_hosts", "None", "file pinning remote host keys (path; default ~/.ssh/known_hosts)"),
    Shared("hosts", "None", "inventory (TOML) of the study's machines; fills the five above and peer"),
    Shared("until_decided", "False", "True: add repetitions of what undecided claims need (see the README)"),
    Shared(
        "budget", "None", 'with until_decided: time for the whole run, e.g. "30m"; None: the first repetitions only'
    ),
    Shared("results_dir", "None", "folder the run is stored under; None: results/"),
    Shared("figures_dir", "None", "folder of PNG/PDF figures; None: figures/"),
)
#: shared parameters that are not the plan's but the notebook's own (where things go, how long it may run)
NOT_PLAN = ("results_dir", "figures_dir", "budget")


def shared_names(spec: Spec) -> list[str]:
    """The shared parameters of this experiment's notebook (a preset only where the experiment has some)."""
    return [p.name for p in SHARED if p.name != "preset" or spec.presets]


def shared_block(name: str) -> str:
    """The first lines of the experiment notebook's parameters cell."""
    spec = specs.get(name)
    values = {"defaults": ", ".join(spec.envs_for()), "presets": ", ".join(spec.presets)}
    lines = [HEADER]
    for parameter in SHARED:
        if parameter.name in shared_names(spec):
            lines.append(f"{parameter.name} = {parameter.default}  # {parameter.comment.format(**values)}")
    return "\n".join(lines)


def plan_arguments(name: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """What the parameters cell set, as `kitlib.plan`'s arguments: the shared ones and the experiment's."""
    spec = specs.get(name)
    wanted = [n for n in shared_names(spec) if n not in NOT_PLAN]
    wanted += list(spec.params_model.model_fields)
    return {n: namespace[n] for n in wanted if n in namespace}
