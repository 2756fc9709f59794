"""Run identity and experimental design: what names a run, the order it runs in, hosts kept apart,
the A/A control, and `kit run --dry-run` starting nothing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kitlib
from kitlib.analyse import analysis
from kitlib.core import drift
from kitlib.core.errors import KitError
from kitlib.core.hostid import host_id
from kitlib.core.records import Record
from kitlib.measure.image import DEFAULT_BASE
from kitlib.measure.run.runner import plan_units, segments
from kitlib.measure.store import RunStore
from kitlib.results import load_records

from ..conftest import DATA


def test_run_ids_differ_by_peer_and_sut_host():
    local = kitlib.plan("redis", environments=["native"], peer="netns")
    assert local.run_id == kitlib.plan("redis", environments=["native"], peer="netns").run_id
    loopback = kitlib.plan("redis", environments=["native"], peer="loopback")
    remote_sut = kitlib.plan("redis", environments=["native"], peer="netns", sut_host="me@10.0.0.2:22")
    other_sut = kitlib.plan("redis", environments=["native"], peer="netns", sut_host="me@10.0.0.3:22")
    ids = {local.run_id, loopback.run_id, remote_sut.run_id, other_sut.run_id}
    assert len(ids) == 4
    assert remote_sut.peer_path == f"remote:{socket.gethostname()}" and loopback.peer_path == "loopback"
    # where the key files are does not change what is measured
    assert (
        remote_sut.run_id
        == kitlib.plan("redis", environments=["native"], peer="netns", sut_host="me@10.0.0.2:22", ssh_key="/k").run_id
    )


def test_run_id_covers_order_seed_and_image():
    base = kitlib.plan("redis", environments=["native", "docker-host-volume"])
    assert base.image and base.image.startswith(f"{DEFAULT_BASE}+Dockerfile:")
    assert kitlib.plan("redis", environments=["native"]).image is None
    assert base.run_id != kitlib.plan("redis", environments=["native", "docker-host-volume"], order="blocked").run_id
    assert base.run_id != kitlib.plan("redis", environments=["native", "docker-host-volume"], seed=7).run_id


def test_a_folder_made_before_a_plan_field_existed_resumes_while_it_is_left_empty(tmp_path):
    plan = kitlib.plan("redis", environments=["native", "nspawn"], peer="netns")
    store = RunStore(tmp_path / "run")
    store.write_plan({k: v for k, v in plan.model_dump(mode="json").items() if k != "survey"})
    store.write_plan(plan.model_dump(mode="json"))  # no survey there, none now: the same plan
    surveyed = kitlib.plan("redis", environments=["native", "nspawn"], peer="netns", survey=["nspawn"])
    with pytest.raises(KitError, match=r"survey: None there, \['nspawn'\] now"):
        store.write_plan(surveyed.model_dump(mode="json"))


def test_a_folder_of_another_plan_is_refused(tmp_path):
    plan = kitlib.plan("redis", environments=["native"], peer="netns")
    other = kitlib.plan("redis", environments=["native"], peer="loopback", clients=[2])
    store = RunStore(tmp_path / "run")
    store.write_plan(plan.model_dump(mode="json"))
    store.write_plan(plan.model_dump(mode="json"))  # the same plan resumes
    store.write_plan(plan.model_dump(mode="json") | {"ssh_key": "/elsewhere"})
    with pytest.raises(KitError, match=r"another plan; it differs in params.clients: \[1, 4, 100\] there, \[2\]"):
        store.write_plan(other.model_dump(mode="json"))
    with pytest.raises(KitError, match="peer: 'netns' there, 'loopback' now"):
        store.write_plan(other.model_dump(mode="json"))
    with pytest.raises(KitError, match="sut_host: None there, 'u@h:22' now"):
        store.write_plan(plan.model_dump(mode="json") | {"sut_host": "u@h:22"})


def test_interleaved_order_is_drawn_from_the_recorded_seed():
    envs = ["native", "native+replica", "docker-host-volume", "docker-nat-volume"]
    plan = kitlib.plan("redis", environments=envs, repetitions=6, clients=[1, 4])
    recorded = json.loads(plan.model_dump_json())
    assert recorded["order"] == "interleaved" and isinstance(recorded["seed"], int)
    rebuilt = type(plan)(**recorded)
    assert rebuilt.run_id == plan.run_id
    assert rebuilt.environment_order() == plan.environment_order()
    rounds = plan.environment_order()
    assert all(sorted(r) == sorted(envs) for r in rounds), "every repetition runs every environment once"
    assert len({tuple(r) for r in rounds}) > 1, "the order is shuffled between repetitions"
    units = plan_units(plan)
    assert [u.position for u in units] == list(range(len(units)))
    assert [u.repetition for u in units] == sorted(u.repetition for u in units)
    assert [env for env, _ in segments(units)][:4] == rounds[0]
    other = kitlib.plan("redis", environments=envs, repetitions=6, clients=[1, 4], seed=plan.seed + 1)
    assert other.environment_order() != rounds
    blocked = kitlib.plan("redis", environments=envs, repetitions=6, clients=[1, 4], order="blocked")
    assert [env for env, _ in segments(plan_units(blocked))] == envs


def test_replica_is_an_option_of_every_kind():
    plan = kitlib.plan("redis", environments=["native", "native+replica", "docker-host-volume+replica"])
    assert plan.environments[1] == "native+replica"
    from kitlib.specs.labels import parse_label, replicated

    assert parse_label("native+replica").kind == "native"
    assert parse_label("qemu-tcg+replica").kind == "vm"
    assert replicated("docker-host-volume+quota5000+replica") == "docker-host-volume+quota5000"
    assert replicated("native") is None
    units = plan_units(plan)
    assert {u.env for u in units} == set(plan.environments)


def _run_folder(root, host: dict, value: float) -> None:
    store = RunStore(root / "redis" / "quick-x")
    records = [
        Record("redis", "redis", "native", "throughput", value + i, "req/s", "quick-x", i, {"clients": 4})
        for i in range(3)
    ]
    store.save_ok("k", records, {})
    store.consolidate()
    store.append_provenance({"host": host})


def test_records_of_two_hosts_are_never_pooled(tmp_path):
    laptop = {"cpu": {"model": "Laptop CPU", "logical_cpus": 4}, "os": {"hostname": "laptop", "kernel": "6.1"}}
    server = {"cpu": {"model": "Server CPU", "logical_cpus": 64}, "os": {"machine_id": "abc123", "hostname": "srv"}}
    _run_folder(tmp_path / "sample", laptop, 100.0)
    _run_folder(tmp_path / "mine", server, 1000.0)
    frame = analysis.load([tmp_path / "sample", tmp_path / "mine"])
    assert set(frame["host"]) == {host_id(laptop), host_id(server)}, "host filled from provenance"
    assert analysis.dimensions(frame)[0] == "host"
    table = analysis.statistics_table(frame)
    assert len(table) == 2 and set(table["n"]) == {3}
    by_host = table.set_index("host")
    assert by_host.loc[host_id(laptop), "mean"] == 101.0 and by_host.loc[host_id(server), "mean"] == 1001.0
    assert by_host.loc[host_id(server), "host_label"].startswith("srv: Server CPU, 64 CPUs")
    assert len(load_records(tmp_path / "mine")) == 3


def test_drift_is_flagged_when_values_follow_position():
    rows = []
    for position in range(24):
        env = ["native", "docker-host-volume"][position % 2]
        steady = 100.0 + (position % 3) * 0.1
        rows.append(
            {
                "experiment": "cpu",
                "workload": "pxz",
                "env": env,
                "metric": "throughput",
                "value": steady,
                "unit": "MB/s",
                "run_id": "r",
                "repetition": position // 2,
                "host": "h",
                "position": position,
            }
        )
        rows.append(
            {
                "experiment": "cpu",
                "workload": "pxz",
                "env": env,
                "metric": "drifting",
                "value": 100.0 * (1 + 0.02 * position),
                "unit": "MB/s",
                "run_id": "r",
                "repetition": position // 2,
                "host": "h",
                "position": position,
            }
        )
    table = drift.drift_table(pd.DataFrame(rows)).set_index("metric")
    assert bool(table.loc["drifting", "drift"]) and table.loc["drifting", "change"] > 0.3
    assert not bool(table.loc["throughput", "drift"])
    assert drift.describe(table.reset_index())[0].startswith("cpu/pxz drifting on host h")


def _namespaces_of(pid: int) -> list[str]:
    """Network namespaces named after process `pid` (the kit names what it makes `kit<pid>x<random>…`),
    read from /run/netns: asking `ip` or Docker would make this test what it checks the dry run is not."""
    folder = Path("/run/netns")
    return [p.name for p in folder.iterdir() if p.name.startswith(f"kit{pid}x")] if folder.is_dir() else []


def test_dry_run_starts_nothing(tmp_path):
    """No container, namespace, connection or image build: tripwires in front of the programs that would
    start them record no call, the Docker socket it is given is dead (so no container can have been made
    through it), and no namespace is named after it."""
    import os

    tripwires = tmp_path / "bin"
    tripwires.mkdir()
    calls = tmp_path / "calls"
    for program in ("docker", "ip", "ssh", "qemu-system-x86_64", "lxc-start", "redis-server", "debootstrap"):
        wire = tripwires / program
        wire.write_text(f'#!/bin/sh\necho "{program} $*" >> {calls}\nexit 1\n')
        wire.chmod(0o755)
    env = {
        **os.environ,
        "KIT_RESULTS": str(tmp_path / "results"),
        "KIT_FIGURES": str(tmp_path / "figures"),
        "PATH": f"{tripwires}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock",
    }
    argv = [sys.executable, "-m", "kitlib.cli", "run", "redis", "--env", "native", "--env", "native+replica"]
    argv += ["--env", "docker-nat-volume", "--dry-run"]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as proc:
        stdout, stderr = proc.communicate(timeout=300)
    done = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr
    assert "run_id: quick-" in done.stdout and "27 points (interleaved order, seed" in done.stdout
    assert "0 already done, 27 to run" in done.stdout
    assert not calls.exists(), calls.read_text() if calls.exists() else ""
    assert _namespaces_of(proc.pid) == []
    assert not (tmp_path / "results").exists(), "a dry run writes nothing"


def test_redis_hit_rate_from_info(tmp_path):
    from kitlib.measure.parsers import redis_info

    text = (DATA / "redis-benchmark" / "info-stats.txt").read_text()
    assert redis_info.counters(text, "x") == {"keyspace_hits": 1, "keyspace_misses": 1}
    after = text.replace("keyspace_hits:1", "keyspace_hits:50001")
    assert redis_info.hit_rate(text, after, "x").value == 100.0
    with pytest.raises(Exception, match="no lookups"):
        redis_info.hit_rate(text, text, "x")


def test_hpcc_system_figures_name_their_method():
    from kitlib.measure import parsers

    found = parsers.parse_file("hpcc", DATA / "hpcc" / "hpccoutf-n8000-np2.txt")
    by = {(m.metric, m.dims.get("kernel"), m.dims.get("variant")): m for m in found}
    star, system = by[("bandwidth", "Triad", "Star")], by[("bandwidth", "Triad", "System")]
    assert system.value == pytest.approx(star.value * 2) and system.unit == "GB/s"
    assert "x processes" in system.dims["method"] and "per process" in star.dims["method"]
    assert by[("gups", None, "System")].value == pytest.approx(by[("gups", None, "Star")].value * 2)


def test_linpack_n_is_one_for_all_environments():
    plan = kitlib.plan("cpu", environments=["native", "docker-host-volume", "qemu-tcg"])
    assert plan.params.linpack_n <= 1000 and "software emulation" in plan.params.linpack_n_basis
    native = kitlib.plan("cpu", environments=["native"])
    assert native.params.linpack_n >= 100 and "native" in native.params.linpack_n_basis
    assert kitlib.plan("cpu", environments=["native"], linpack_n=1000).params.linpack_n_basis == "given"


def test_aa_table_reports_the_noise_floor():
    from kitlib.analyse import replicas

    rows = [
        {
            "experiment": "redis",
            "workload": "redis",
            "env": env,
            "metric": "throughput",
            "value": v,
            "unit": "req/s",
            "run_id": "r",
            "repetition": i,
            "host": "h",
            "clients": 4,
        }
        for env, values in (
            ("native", [100.0, 102.0, 98.0]),
            ("native+replica", [101.0, 99.0, 100.0]),
            ("docker-host-volume", [90.0, 91.0, 89.0]),
        )
        for i, v in enumerate(values)
    ]
    table = replicas.aa_table(pd.DataFrame(rows))
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["env"], row["replicates"], row["config"]) == ("native+replica", "native", "clients=4")
    assert row["ratio"] == pytest.approx(1.0, abs=1e-3)
    assert row["ci_low"] < 1 < row["ci_high"] and 0 < row["noise_pct"] < 5
