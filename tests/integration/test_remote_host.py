"""The system under test on a second machine reached only over SSH (a namespace host with its own sshd
and Docker engine): Redis and the request-response latency study on `native`, `docker-host-volume` and
`docker-nat-volume` there, the client on this machine; and `kit hosts check` on it."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import kitlib
from kitlib.measure.host import ssh
from tests.conftest import plan_session, write_inventory

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-host-volume", "docker-nat-volume"]
PROJECT = Path(__file__).resolve().parents[2]


def remote(host, command: str) -> str:
    """A shell command on the namespace host, over its pinned SSH connection, as the kit reaches it."""
    connection = ssh.connect(host.target, key_filename=host.key, known_hosts=host.known_hosts)
    try:
        code, output = ssh.run(connection, ["sh", "-c", command], timeout=60)
    finally:
        connection.close()
    assert code == 0, output
    return output


def processes_in(host) -> list[str]:
    """Commands of the processes in the host's network namespace other than its sshd and engine."""
    pids = subprocess.run(["ip", "netns", "pids", host.namespace], capture_output=True, text=True).stdout.split()
    commands = []
    for pid in pids:
        try:
            commands.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode().strip())
        except OSError:
            continue
    daemons = ("sshd", "dockerd", "containerd", "unshare", "nsenter")
    return [c for c in commands if c and not any(d in c.split()[0] for d in daemons) and host.name not in c]


def check_run(result, host, docker_client):
    assert result.failures.empty, result.failures.to_string()
    assert set(result.records["env"]) == set(ENVS)
    session = plan_session(result.root)
    facts = session["sut_hosts"][host.target]
    assert facts["os"]["hostname"] == host.hostname, "the remote host's facts, not this machine's"
    assert set(result.records["host"]) == {facts["host_id"]} != {session["host_id"]}
    local = docker_client.info()
    for label in ("docker-host-volume", "docker-nat-volume"):
        env = session["environments"][label]
        engine = env["engine"]
        assert env["remote_host"] == host.target and env["address"] == host.address
        assert engine["engine_id"] != local["ID"] and engine["docker_root_dir"] == str(host.data_root)
        assert engine["engine_host"] == host.hostname and env["image_id"].startswith("sha256:")
    assert session["environments"]["native"]["remote_host"] == host.target
    # nothing left on either host: containers and volumes on both engines, processes in the remote one
    assert remote(host, "docker ps -aq; docker volume ls -q").strip() == ""
    assert processes_in(host) == []
    for later in json.loads((result.root / "provenance.json").read_text())["sessions"]:
        run_label = later["run_label"]  # every session's, a point measured again at the run's end too
        assert not docker_client.containers.list(all=True, filters={"label": f"org.kitlib.run={run_label}"})
        assert remote(host, f"ls -d /var/tmp/{run_label}-* 2>/dev/null || true").strip() == ""
    return session


@pytest.mark.extended  # a remote host's runs: a third host runs the client, redis on a remote native host
def test_redis_and_rr_latency_on_a_remote_host_with_its_own_engine(namespace_host, docker_client, tmp_path):
    host = namespace_host
    hosts = str(write_inventory(host, tmp_path))
    redis = kitlib.plan("redis", environments=ENVS, repetitions=1, clients=[1, 4], requests=4000, hosts=hosts)
    local = kitlib.plan("redis", environments=ENVS, repetitions=1, clients=[1, 4], requests=4000, peer="netns")
    assert redis.run_id != local.run_id and redis.sut_address == host.address
    result = kitlib.run(redis, results_root=tmp_path / "results", progress=False)
    check_run(result, host, docker_client)
    mix = result.records[(result.records["op"] == "mix") & (result.records["metric"] == "throughput")]
    assert len(mix) == 6 and (mix["value"] > 0).all()

    latency = kitlib.plan(
        "latency",
        environments=ENVS,
        parts=["shares", "bridge"],
        sizes_kb=[1],
        requests=2000,
        repetitions=2,
        hosts=hosts,
    )
    result = kitlib.run(latency, results_root=tmp_path / "results", progress=False)
    session = check_run(result, host, docker_client)
    nat = session["environments"]["docker-nat-volume"]
    assert nat["published_ports"], "NAT: the port is published on the remote engine"
    records = result.records
    means = records[records["metric"] == "latency_mean"].groupby(["env", "workload"])["value"].agg(["mean", "count"])
    print(means.to_string())
    assert (means["mean"] > 0).all() and set(means.index.get_level_values("env")) == set(ENVS)


def test_hosts_check_reports_labels_and_refuses_an_unknown_host_key(namespace_host, tmp_path, capsys):
    from kitlib.cli import main

    host = namespace_host
    assert main(["hosts", "check", str(write_inventory(host, tmp_path))]) == 0
    report = capsys.readouterr().out
    assert f"host {host.hostname}" in report and str(host.data_root) in report
    assert re.search(r"^  docker-nat-volume +yes  ", report, re.M) and re.search(r"^  kvm +no  ", report, re.M)

    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    assert main(["hosts", "check", str(write_inventory(host, tmp_path, known_hosts=str(empty)))]) == 1
    refused = capsys.readouterr().out
    assert f"refused: its host key is not in {empty}" in refused and "docker-" not in refused


def test_a_third_host_runs_the_client(namespace_host, client_host, docker_client, tmp_path):
    """`[client]` in the inventory: the load generator runs on another machine over SSH and reaches the
    system under test at its address, through its engine's DNAT for docker-nat."""
    hosts = str(write_inventory(namespace_host, tmp_path, client=client_host))
    plan = kitlib.plan(
        "latency",
        environments=["native", "docker-nat-volume"],
        parts=["shares", "bridge"],
        sizes_kb=[1],
        requests=1000,
        repetitions=1,
        hosts=hosts,
    )
    assert plan.peer == "remote" and plan.peer_path == f"remote:{client_host.target}"
    result = kitlib.run(plan, results_root=tmp_path / "results", progress=False)
    assert result.failures.empty, result.failures.to_string()
    assert set(result.records["peer"]) == {f"remote:{client_host.target}"}
    assert set(result.records["env"]) == {"native", "docker-nat-volume"}
    session = plan_session(result.root)
    assert session["peer"]["kind"] == "remote" and session["peer"]["host_address"] == namespace_host.address
    assert remote(namespace_host, "docker ps -aq; docker volume ls -q").strip() == ""
    assert processes_in(namespace_host) == [] and processes_in(client_host) == []


def test_a_namespace_host_whose_owner_was_killed_is_cleaned_away(root_netns, tmp_path):
    """A script holding a namespace host (its sshd and Docker engine) is killed with SIGKILL; the clean-up
    every test session runs first (`python -m tests.support.namespace_host --clean`) then removes its
    processes, namespace, veth, rules, cgroups and folders."""
    import os
    import sys

    from kitlib.core.signals import default_dispositions

    from ..conftest import wait_for
    from ..support.namespace_host import NamespaceHost

    script = (
        "import sys, time\n"
        "from tests.support.namespace_host import NamespaceHost\n"
        "host = NamespaceHost()\n"
        "host.start()\n"
        "print(host.name, flush=True)\n"
        "time.sleep(600)\n"
    )
    ready = tmp_path / "name"
    with ready.open("w") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", script],
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=default_dispositions,
            env={**os.environ, "PYTHONPATH": str(PROJECT)},
        )
    try:
        wait_for(lambda: "kithost" in ready.read_text(), 120, child, "the namespace host")
    finally:
        child.kill()
        child.wait(timeout=30)
    name = next(word for word in ready.read_text().split() if word.startswith("kithost"))
    host = NamespaceHost(docker=False)
    host.name = host.namespace = name
    host.run_dir = host.run_dir.parent / name
    host.workdir = None
    assert host.leftovers(), "the killed script's host is still there"
    cleaned = subprocess.run(
        [sys.executable, "-m", "tests.support.namespace_host", "--clean"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert name in cleaned.stdout, cleaned.stdout
    assert host.leftovers() == []
    assert not list(Path("/var/tmp").glob(f"{name}-*"))
