"""Start-up time (paper §II): parameters, profiles and what the records mean."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from kitlib.core.schema import FigureSpec, Schema, WorkloadSchema
from kitlib.specs.base import Spec


class StartupParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


SPEC = Spec(
    name="startup",
    notebook="experiments/startup.ipynb",
    params_model=StartupParams,
    profiles={"quick": {}, "standard": {}, "paper": {}},
    default_envs=("docker-host-volume", "docker-nat-volume"),
    repetitions={"quick": 3, "standard": 5, "paper": 10},
    schema=Schema(
        workloads={"startup": WorkloadSchema()},
        figures=(FigureSpec("startup-time", "startup.startup_figure"),),
        claims=("docker_starts_under_a_second", "kvm_starts_slower_than_docker"),
    ),
)
