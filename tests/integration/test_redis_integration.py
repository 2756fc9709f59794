"""The Redis experiment end to end: papermill, the real engine, the peer namespace, real redis."""

from __future__ import annotations

import nbformat
import pandas as pd
import pytest

import kitlib
from kitlib.core import paths
from kitlib.measure import capacity
from kitlib.measure.store import RunStore
from kitlib.notebooks import execute

from ..conftest import leftovers, plan_session

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-host-volume", "docker-nat-volume"]
TINY = {"clients": [1, 8], "requests": 20000}


def test_notebook_runs_all_three_environments_and_resumes(docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    output = results / "redis.ipynb"
    parameters = {
        "environments": ENVS,
        "repetitions": 2,
        "results_dir": str(results),
        "figures_dir": str(figures),
        **TINY,
    }
    execute(paths.notebooks_root() / "experiments" / "redis.ipynb", output, parameters)

    plan = kitlib.plan("redis", environments=ENVS, repetitions=2, **TINY)
    run_dir = results / "redis" / plan.run_id
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == set(ENVS)
    assert not (run_dir / "failures.csv").exists()
    mix = records[(records["op"] == "mix") & (records["metric"] == "throughput")]
    assert len(mix) == len(ENVS) * len(TINY["clients"]) * 2
    assert (records["value"] > 0).all()
    assert set(records["unit"]) == {"req/s", "us", "s", "%"}
    hits = records[records["metric"] == "hit_rate"]
    assert len(hits) == len(ENVS) * len(TINY["clients"]) * 2 and (hits["value"] > 95).all()
    assert records["position"].notna().all() and records["host"].nunique() == 1
    assert set(records["peer"]) == {"netns"}
    assert set(mix["outstanding"]) == {10, 80}
    assert (records["key_length"] == 12).all() and (records["value_size"] == 50).all()
    # server's and client's CPUs probed around every point, in % of the run's usual figure
    assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()
    counted = [u for u in RunStore(run_dir).units() if u["status"] == "ok"]
    kinds = {u["interference"]["capacity_probes"]["kind"] for u in counted}
    assert kinds == {capacity.WAKEUP}, "10 and 80 requests in flight wait on wake-ups: the wake-up probe"

    session = plan_session(run_dir)
    assert session["peer"]["kind"] == "netns" and session["peer"]["reaches_nat"] is True
    assert set(session["environments"]) == set(ENVS)
    assert session["environments"]["docker-nat-volume"]["published_ports"]
    assert session["host"]["cpu"]["logical_cpus"] >= 1
    assert session["host"]["kitlib"]["version"] == kitlib.__version__
    assert "redis-server" in session["tool_versions"]["docker-host-volume"]
    native_redis = session["tool_versions"]["native"]["redis-server"]
    image_redis = session["tool_versions"]["docker-host-volume"]["redis-server"]
    mismatch = [m for m in session["version_mismatches"] if m["package"] == "redis-server"]
    assert bool(mismatch) == (native_redis != image_redis)
    assert any(c["argv"][0] == "redis-benchmark" for c in session["commands"])
    # the host's own commands too: the peer namespace and its veth, made and removed
    on_host = [c["argv"][:3] for c in session["commands"] if c["where"] == "host"]
    assert ["ip", "netns", "add"] in on_host and ["ip", "netns", "del"] in on_host, on_host
    assert set(session["layout"]["sut_cpus"]).isdisjoint(session["layout"]["client_cpus"])
    raw_files = [p for p in (run_dir / "raw").glob("*.txt") if ".attempt" not in p.name]
    # a SET and a GET output per unit, and INFO stats before and after the GET phase
    assert len(raw_files) == len(ENVS) * len(TINY["clients"]) * 2 * 4
    # a point measured again on a busy machine keeps its discarded attempt's outputs beside its unit file
    for discarded in (run_dir / "raw").glob("*.attempt*.txt"):
        unit, attempt = discarded.name.split(".")[:2]
        assert (run_dir / "units" / f"{unit}.{attempt}.json").exists(), discarded

    executed = nbformat.read(output, as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in executed.cells)
    (png,) = figures.glob("redis-fig8-9-throughput-latency-*.png")  # one file per host: this one
    assert png.stat().st_size > 10_000 and png.with_suffix(".pdf").exists()

    again = kitlib.run(plan, results_root=results, progress=False)
    assert again.measured_units == 0 and again.skipped_units == len(ENVS) * 2 * 2
    assert len(again.records) == len(records)
    assert leftovers(docker_client) == [] and leftovers(docker_client, __import__("os").getpid()) == []


def test_nat_reached_through_dnat_not_docker_proxy(docker_client, root_netns, bench_image):
    """From the peer namespace the published port is reached through Docker's DNAT rule, which counts it."""
    import re
    import subprocess

    from kitlib.core import naming
    from kitlib.measure import cpus, environments
    from kitlib.measure.peer import NamespacePeer

    def dnat_packets(host_port: int) -> int:
        out = subprocess.run(
            ["iptables", "-t", "nat", "-L", "DOCKER", "-v", "-n", "-x"], capture_output=True, text=True
        ).stdout
        return sum(
            int(line.split()[0]) for line in out.splitlines() if re.search(rf"\bDNAT\b.*dpt:{host_port}\b", line)
        )

    run_label = naming.new_run_label()
    layout = cpus.split(1, [16379])
    with NamespacePeer(layout.client_cpus, run_label) as peer:
        env = environments.create(
            "docker-nat-volume", layout, run_label=run_label, peer_reaches_nat=True, image=bench_image
        )
        with env:
            env.start_service("redis", ["redis-server", "--port", "16379", "--protected-mode", "no"], ready_port=16379)
            host, port = env.address_for_peer(16379, peer.host_address)
            assert host == peer.host_address
            before = dnat_packets(port)
            assert peer.run(["redis-cli", "-h", host, "-p", str(port), "PING"], timeout=30).output.strip() == "PONG"
            assert dnat_packets(port) > before
    assert leftovers(docker_client, __import__("os").getpid()) == []


def test_a_time_bound_point_records_how_steady_each_phase_was(root_netns, isolated_dirs):
    """redis-benchmark's quarter-second ticks are each phase's sub-intervals: the point's records carry
    its steadiness, and its unit file says which phase missed the rule and why."""
    results, _ = isolated_dirs
    plan = kitlib.plan("redis", environments=["native"], repetitions=1, clients=[8], seconds=1.5)
    outcome = kitlib.run(plan, results_root=results, progress=False)
    assert outcome.failures is None or len(outcome.failures) == 0, outcome.failures
    records = outcome.records
    throughput = records[records["metric"] == "throughput"]
    assert set(throughput["op"]) == {"SET", "GET", "mix"}
    assert (throughput["point_seconds"] == 1.5).all()
    assert throughput["steady"].notna().all() and (throughput["warmup_s"] >= 0).all()
    # the kept attempt: one disturbed by a busy host is kept beside it, discarded
    (unit,) = [u for u in RunStore(outcome.root).units() if u["status"] == "ok"]
    steadiness = unit["steady"]
    # a phase runs the requests the warm-up's rate gives for 1.5 s, so its length follows this machine:
    # its ticks are one per quarter second of the phase the records time, the first left out
    phases = records[(records["metric"] == "duration") & records["op"].isin(["SET", "GET"])]["value"]
    expected = sum(seconds / 0.25 - 1 for seconds in phases)
    assert len(phases) == 2 and steadiness["interval_s"] == 0.25
    assert steadiness["intervals"] >= 2 and abs(steadiness["intervals"] - expected) <= 2.5, (steadiness, list(phases))
    assert all(reason.startswith(("SET: ", "GET: ")) for reason in steadiness["unsteady"]), steadiness
    assert bool(steadiness["unsteady"]) == (not throughput["steady"].iloc[0])
