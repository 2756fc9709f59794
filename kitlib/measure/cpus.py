"""Placing the system under test and the load generator on disjoint CPUs."""

from __future__ import annotations

import os
import warnings

from kitlib.core.errors import Notice
from kitlib.measure.environments.base import Layout

__all__ = ["Layout", "available_cpus", "split"]


def available_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def split(sut_cores: int | None, ports: list[int] | None = None) -> Layout:
    """The last `sut_cores` CPUs for the system under test, the rest for the client.

    `sut_cores=None` gives every CPU to the system under test (a workload with no client). With a
    single CPU both share it, which the layout records and a warning says.
    """
    cpus = available_cpus()
    if sut_cores is None or sut_cores >= len(cpus):
        if sut_cores is not None and len(cpus) < 2:
            warnings.warn(
                "one CPU only: client and server share it; results include their interference", Notice, stacklevel=2
            )
        return Layout(sut_cpus=cpus, client_cpus=cpus if sut_cores is not None else [], ports=ports or [])
    return Layout(sut_cpus=cpus[-sut_cores:], client_cpus=cpus[:-sut_cores], ports=ports or [])
