"""The inventory of a study's machines: parsing, errors that name the key, and the plan it fills."""

from __future__ import annotations

import socket

import pytest

import kitlib
from kitlib.core.errors import PlanError
from kitlib.measure import inventory


@pytest.fixture
def files(tmp_path):
    (tmp_path / "known_hosts").write_text(
        "10.0.0.2 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlaceholderKeyForParsingOnly\n"
    )
    (tmp_path / "id_ed25519").write_text("not read by the parser\n")
    (tmp_path / "id_ed25519").chmod(0o600)
    return tmp_path


def write(folder, text: str):
    path = folder / "study.toml"
    path.write_text(text)
    return path


GOOD = """
[ssh]
key = "id_ed25519"
known_hosts = "known_hosts"

[sut]
host = "server1.lab"
port = 2222
address = "10.0.0.2"
docker_socket = "/run/docker.sock"
"""


def test_a_valid_inventory_resolves_paths_and_fills_the_plan(files):
    hosts = inventory.load(write(files, GOOD))
    assert hosts.sut.target == "root@server1.lab:2222"
    assert hosts.ssh.known_hosts == files / "known_hosts", "relative to the inventory's folder"
    assert hosts.client is None
    fields = hosts.plan_fields()
    assert fields["sut_host"] == "root@server1.lab:2222" and fields["sut_address"] == "10.0.0.2"
    assert fields["sut_docker_socket"] == "/run/docker.sock" and "peer" not in fields

    plan = kitlib.plan("redis", environments=["native", "docker-nat-volume"], hosts=str(files / "study.toml"))
    assert plan.sut_host == "root@server1.lab:2222" and plan.known_hosts == str(files / "known_hosts")
    local = kitlib.plan("redis", environments=["native", "docker-nat-volume"], peer="netns")
    assert plan.run_id != local.run_id, "a run on another machine never resumes a local run"
    assert plan.identity()["sut_host"] == "root@server1.lab:2222"
    assert plan.peer_path == f"remote:{socket.gethostname()}", "the client runs here"


def test_a_client_host_makes_the_peer_remote(files):
    hosts = inventory.load(write(files, GOOD + '\n[client]\nhost = "client1.lab"\nuser = "bench"\n'))
    plan = kitlib.plan("redis", environments=["native"], hosts=str(files / "study.toml"))
    assert hosts.plan_fields()["peer_host"] == "bench@client1.lab:22"
    assert plan.peer == "remote" and plan.peer_path == "remote:bench@client1.lab:22"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[ssh]\nknown_hosts = 'known_hosts'\n", r"sut: Field required"),
        (GOOD.replace("port = 2222", "port = 70000"), r"sut\.port: must be a port number 1\.\.65535"),
        (GOOD.replace('host = "server1.lab"', 'host = "root@server1.lab"'), r"sut\.host: give the host name alone"),
        (GOOD + "\n[client]\nhots = 'x'\n", r"client\.hots: Extra inputs are not permitted"),
        (GOOD.replace('known_hosts = "known_hosts"', 'known_hosts = "absent"'), r"ssh\.known_hosts: no such file"),
        (GOOD.replace("[sut]", "[sut"), r"is not valid TOML"),
    ],
)
def test_bad_inventories_say_which_key_and_why(files, text, message):
    with pytest.raises(PlanError, match=message):
        inventory.load(write(files, text))


def test_a_missing_inventory_is_named(tmp_path):
    with pytest.raises(PlanError, match="cannot read the inventory"):
        inventory.load(tmp_path / "absent.toml")


def test_a_remote_sut_refuses_vm_labels(files):
    with pytest.raises(PlanError, match=r"runs `native` and `docker-\*` only"):
        kitlib.plan("redis", environments=["kvm"], hosts=str(write(files, GOOD)))


def test_kit_run_takes_the_inventory(files, capsys, monkeypatch, tmp_path):
    from kitlib.cli import main

    monkeypatch.setenv("KIT_RESULTS", str(tmp_path / "results"))
    args = ["run", "redis", "--env", "docker-nat-volume", "--hosts", str(write(files, GOOD)), "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert '"sut_host": "root@server1.lab:2222"' in out and '"sut_address": "10.0.0.2"' in out
