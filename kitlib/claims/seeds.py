"""Seed 003 ("A Performance Study of Containers in Cloud Environment") and seed 002's NUMA finding."""

from __future__ import annotations

import math

import pandas as pd

from kitlib import hostfacts
from kitlib.claims.core import (
    NOT_TESTABLE,
    Band,
    Claim,
    Verdict,
    about_equal,
    about_times,
    all_of,
    at_least_higher,
    at_least_lower,
    compare,
    exact,
    missing,
)

SEED3 = "A Performance Study of Containers in Cloud Environment (seed 003)"
RANDOM_IO = ["rand_read", "rand_write"]
DOCKER_ON_OVERLAY = exact("docker-nat-overlay", "docker-host-overlay")
DOCKER_ON_VOLUME = exact("docker-host-volume", "docker-nat-volume")


def _docker_in_vm(experiment: str, metric: str, band, **equal):
    """Docker inside a KVM guest against Docker on the host; a TCG guest never stands for it."""
    compared = compare(experiment, metric, exact("docker-in-kvm"), "docker-nat-overlay", band, **equal)

    def predicate(df: pd.DataFrame) -> Verdict:
        envs = set(df["env"].astype(str)) if "env" in df.columns else set()
        if "docker-in-kvm" not in envs:
            if any(e.split("+")[0] == "docker-in-qemu-tcg" for e in envs):
                return Verdict(
                    NOT_TESTABLE,
                    "no docker-in-kvm runs; only Docker in a software-emulated guest (TCG) here: not a hypervisor",
                )
            return missing("docker-in-kvm runs")
        return compared(df)

    return predicate


def _numa_pinning_helps(df: pd.DataFrame) -> Verdict:
    """Pinned (+numa<N>) against the same environment unpinned; the node count is the records' host's."""
    nodes = hostfacts.numa_nodes(df) or 1
    rows = df[(df["experiment"] == "memory") & (df["metric"] == "bandwidth")] if "experiment" in df else df
    pinned = sorted(e for e in rows["env"].astype(str).unique() if "+numa" in e) if "env" in rows else []
    if not pinned:
        if nodes < 2:
            return Verdict(
                NOT_TESTABLE,
                "the host that made these records has one NUMA node (per their provenance; "
                "none recorded counts as one): there is no placement to choose",
            )
        return missing("STREAM runs of an environment pinned to one NUMA node (+numa<N>)")
    parts = [
        compare("memory", "bandwidth", exact(env), env.split("+")[0], at_least_higher(0.0), workload="stream")
        for env in pinned
    ]
    return all_of("every pinned environment", *parts)(df)


CLAIMS: list[Claim] = [
    Claim(
        "lxc_matches_docker_random_io",
        f"{SEED3}, §4.2, Fig. 3",
        "A system container (LXC) at least matches Docker on overlay in random-I/O IOPS (ratio ≥ 0.95)",
        compare(
            "block", "iops", exact("lxc"), DOCKER_ON_OVERLAY, Band(0.95, math.inf, "at least 0.95×"), workload=RANDOM_IO
        ),
    ),
    Claim(
        "overlay_explains_lxc_gap",
        f"{SEED3}, §4.2",
        "The union filesystem (AUFS there, overlay here) explains Docker's random-I/O gap to LXC: Docker on "
        "overlay is below LXC, Docker on a volume within 10% of it",
        all_of(
            "gap on overlay, none on a volume",
            compare("block", "iops", DOCKER_ON_OVERLAY, "lxc", at_least_lower(0.0), workload=RANDOM_IO),
            compare("block", "iops", DOCKER_ON_VOLUME, "lxc", about_equal(0.10), workload=RANDOM_IO),
        ),
    ),
    Claim(
        "docker_rtt_vs_lxc",
        f"{SEED3}, §4.2, Fig. 5",
        "Docker's round trip is about 1.25× LXC's (band 1.1–1.4)",
        compare("net", "rtt_mean", exact("docker-nat-overlay"), "lxc", about_times(1.25, 0.12), protocol="tcp"),
    ),
    Claim(
        "docker_in_vm_costs_disk_io",
        f"{SEED3}, §4.2, Fig. 3",
        "Docker inside a VM loses much random-read throughput against Docker on the host: at least 20% (paper ~40%)",
        _docker_in_vm("block", "iops", at_least_lower(0.2), workload="rand_read"),
    ),
    Claim(
        "docker_in_vm_costs_latency",
        f"{SEED3}, §4.2, Fig. 5",
        "Docker inside a VM adds round-trip latency against Docker on the host",
        _docker_in_vm("net", "rtt_mean", at_least_higher(0.0), protocol="tcp"),
    ),
    Claim(
        "numa_pinning_helps_memory",
        "VMware VROOM! blog, Docker posts (seed 002)",
        "Pinning a container or VM to one NUMA node raises memory bandwidth on a multi-node host",
        _numa_pinning_helps,
    ),
]
