"""`kit fleet run` through a real Slurm: a controller here, a `slurmd` in each of two namespace hosts (each
a machine of its own: address, hostname, machine-id). The job array's two tasks come back as bundles
`kit verify` accepts, from two machines; with one task cancelled mid-run, the other completes and the
cancelled one is named with its state, its kit stopped."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kitlib.results import bundles

from ..conftest import missing, start_kit, wait_for
from .test_fleet import OPTIONS, kit_processes_in

pytestmark = [pytest.mark.slow, pytest.mark.netns]

KIT = str(Path(sys.executable).with_name("kit"))


@pytest.fixture
def cluster(root_netns, tmp_path):
    """Two namespace hosts as Slurm nodes, and a fleet file naming the cluster."""
    from kitlib.core.errors import EnvironmentUnavailable

    from ..support.namespace_host import NamespaceHost
    from ..support.slurm_cluster import SlurmCluster

    hosts = [NamespaceHost(docker=False), NamespaceHost(docker=False)]
    slurm = SlurmCluster(hosts)
    try:
        for host in hosts:
            host.start()
        slurm.start()
    except EnvironmentUnavailable as exc:
        slurm.stop()
        for host in hosts:
            host.stop()
        missing("slurm", f"no Slurm cluster of namespace hosts: {exc}")
    results = Path(f"/tmp/kit-fleet-slurm-{secrets.token_hex(3)}")
    fleet_file = tmp_path / "fleet.toml"
    fleet_file.write_text(f'backend = "slurm"\n[slurm]\nnodes = 2\nresults = "{results}"\nkit = "{KIT}"\n')
    try:
        yield fleet_file, slurm, results
    finally:
        slurm.stop()
        for host in hosts:
            host.stop()
        shutil.rmtree(results, ignore_errors=True)
    assert slurm.leftovers() == [], slurm.leftovers()
    for host in hosts:
        assert host.leftovers() == [], host.leftovers()


@pytest.mark.extended  # a fleet's bundles: the fleet run of two hosts over SSH
def test_a_slurm_job_array_brings_back_a_verified_bundle_from_each_node(cluster, tmp_path):
    fleet_file, slurm, results = cluster
    output = tmp_path / "bundles"
    proc = start_kit(
        ["fleet", "run", str(fleet_file), "redis", "-o", str(output), "--", *OPTIONS, "-p", "seconds", "1"],
        slurm.environ,
    )
    said, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, said[-3000:]
    assert "2 of 2 host(s) done" in said and "running" in said, said[-3000:]
    record = json.loads((output / "fleet.json").read_text())
    assert record["backend"] == "slurm" and [h["host"] for h in record["hosts"]] == slurm.nodes
    machines = set()
    for node in slurm.nodes:
        found = bundles.verify(output / f"{node}.tar.gz")
        assert [e for e, _ in found.runs] == ["redis"]
        with bundles.opened(output / f"{node}.tar.gz") as folder:
            records = pd.concat(pd.read_csv(f) for f in folder.glob("*/*/records.csv"))
        assert set(records["env"]) == {"native"} and len(records) > 0
        machines |= set(records["host"])
    assert len(machines) == 2, "each node measured itself: two machines"
    assert [kit_processes_in(task) for task in results.glob("*/task-*")] == [[], []]
    print(f"slurm fleet: {[h['target'] for h in record['hosts']]}, {len(machines)} machines")


@pytest.mark.extended  # a fleet's bundles: the fleet run of two hosts over SSH
def test_a_cancelled_task_is_named_and_the_other_completes(cluster, tmp_path):
    fleet_file, slurm, results = cluster
    output = tmp_path / "bundles"
    proc = start_kit(
        ["fleet", "run", str(fleet_file), "redis", "-o", str(output), "--", *OPTIONS, "-p", "seconds", "3"],
        slurm.environ,
    )
    # task 1 has measured a point: its run is under way; then it is cancelled as an operator would
    wait_for(lambda: any(results.glob("*/task-1/redis/*/units/*.json")), 300, proc, "a first point of task 1")
    (label,) = [p.name for p in results.iterdir()]
    env = {**os.environ, **slurm.environ}
    listed = subprocess.run(
        ["squeue", "-h", "-o", "%F", "-n", f"kit-fleet-{label}"], env=env, capture_output=True, text=True, timeout=60
    )
    subprocess.run(["scancel", f"{listed.stdout.split()[0]}_1"], env=env, check=True, timeout=60)
    said, _ = proc.communicate(timeout=900)
    assert proc.returncode == 1, said[-3000:]
    assert "1 of 2 host(s) done" in said
    record = json.loads((output / "fleet.json").read_text())
    first, second = record["hosts"]
    assert first["status"] == "done" and second["status"] == "failed"
    assert "CANCELLED" in second["reason"], second["reason"]
    bundles.verify(Path(first["bundle"]))
    assert not (output / f"{slurm.nodes[1]}.tar.gz").exists()
    wait_for(lambda: kit_processes_in(results / label / "task-1") == [], 120, what="the cancelled task's kit to stop")
    print(f"cancelled: {second['reason'][:200]}")
