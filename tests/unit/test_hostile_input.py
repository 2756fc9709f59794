"""Addresses, hosts, users, ports, sockets and SSH targets from outside are refused, naming the field,
unless they have the plain form: checked where they enter (the inventory, `kit run`'s options, a
notebook's parameters), before anything starts or any plan.json is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kitlib
from kitlib.cli import main
from kitlib.core import hostnames
from kitlib.core.errors import PlanError
from kitlib.measure import inventory

ROOT = Path(__file__).resolve().parents[2]
#: one of each shell metacharacter, as a careless or hostile inventory would give it
META = [";id", "$(id)", "`id`", "|id", "&id", "\nid", " id", "'id'", '"id"', ">x", "*"]


def hostile(plain: str) -> list[str]:
    """`plain` with each metacharacter appended, and with a leading `-` (read as an option)."""
    return [plain + m for m in META] + [f"-{plain}", f"-o{plain}"]


FIELDS = {  # the check, a plain value it accepts, hostile values it must refuse
    "address": (hostnames.address, "10.0.0.2", hostile("10.0.0.2") + hostile("server1.lab") + ["fe80::1%eth0;id"]),
    "host": (hostnames.host_name, "server1.lab", hostile("server1.lab") + ["::1"]),
    "user": (hostnames.user, "bench", hostile("bench")),
    "port": (hostnames.port, 22, hostile("22") + [0, 65536, -22, True, 22.0, ""]),
    "socket": (hostnames.socket_path, "/run/docker.sock", hostile("/run/docker.sock") + ["unix:///run/d.sock"]),
    "ssh target": (hostnames.ssh_target, "root@server1.lab:22", hostile("root@server1.lab:22") + hostile("root@x")),
}


@pytest.mark.parametrize("name", FIELDS)
def test_every_check_refuses_shell_metacharacters_and_a_leading_dash(name):
    check, plain, bad = FIELDS[name]
    assert check(plain) == plain
    for value in bad:
        with pytest.raises(ValueError, match="must be"):
            check(value)
            pytest.fail(f"{name} accepted {value!r}")


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (
            hostnames.address,
            ["10.0.0.2", "::1", "2001:db8::2", "localhost", "server-1.lab", "server1.lab.", "a" * 63 + ".lab"],
            ["999.1.1.1", "10.0.0", "a..b", "-a.lab", "a-.lab", "a" * 64 + ".lab", "a_b.lab", "", ".", None, 10],
        ),
        (hostnames.user, ["root", "bench", "_svc", "a.b-c", "u" * 32], ["", "u" * 33, "1abc", "a@b", "a:b", None]),
        (hostnames.port, [1, 22, 65535], ["", "0x16", "22 ", "２２", None]),
        (
            hostnames.ssh_target,
            ["server1.lab", "root@server1.lab", "10.0.0.2:22", "bench@client1.lab:2222"],
            ["", "@host", "root@", "host:", "a@b@host", "host:22:22", "root@::1"],
        ),
        (hostnames.socket_path, ["/run/docker.sock", "/run/user/1000/docker.sock"], ["run/d.sock", "//x", "/a b"]),
    ],
)
def test_plain_forms_pass_and_near_misses_are_refused(check, good, bad):
    for value in good:
        assert check(value) == value
    for value in bad:
        with pytest.raises(ValueError):
            check(value)


def test_a_port_may_be_given_as_its_digits():
    assert hostnames.port("2222") == 2222


def test_a_file_path_is_free_text_but_for_control_characters():
    for value in ["/home/a b/key", "~/.ssh/kit key$(x)", Path("/tmp/k;x")]:
        assert hostnames.file_path(value) == value
    for value in ["a\nb", "a\x00b", "a\tb", ""]:
        with pytest.raises(ValueError, match="control characters"):
            hostnames.file_path(value)


# -- the inventory ---------------------------------------------------------------------------------------

INVENTORY = """
[ssh]
known_hosts = "known_hosts"

[sut]
host = "server1.lab"
user = "root"
port = 22
address = "10.0.0.2"
docker_socket = "/run/docker.sock"

[client]
host = "client1.lab"
user = "bench"
port = 22
"""


def inventory_with(folder: Path, section: str, key: str, value) -> Path:
    """INVENTORY with `key` of `[section]` replaced by `value` (a TOML string or integer; None: as it is)."""
    (folder / "known_hosts").write_text("server1.lab ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlaceholder\n")
    lines, current = [], None
    for line in INVENTORY.splitlines():
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section and line.startswith(f"{key} =") and value is not None:
            line = f"{key} = {json.dumps(value)}"  # a JSON string is a TOML basic string
        lines.append(line)
    path = folder / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


INVENTORY_FIELDS = {
    ("sut", "host"): hostile("server1.lab"),
    ("sut", "user"): hostile("root"),
    ("sut", "port"): hostile("22") + [0, 65536],
    ("sut", "address"): hostile("10.0.0.2"),
    ("sut", "docker_socket"): hostile("/run/docker.sock"),
    ("client", "host"): hostile("client1.lab"),
    ("client", "user"): hostile("bench"),
    ("client", "port"): hostile("22"),
}


@pytest.mark.parametrize(("section", "key"), INVENTORY_FIELDS)
def test_an_inventory_field_with_shell_metacharacters_is_refused_naming_it(tmp_path, section, key):
    assert inventory.load(inventory_with(tmp_path, section, key, None)).sut.address == "10.0.0.2"
    for value in INVENTORY_FIELDS[section, key]:
        path = inventory_with(tmp_path, section, key, value)
        with pytest.raises(PlanError, match=rf"invalid inventory .*\n  {section}\.{key}: .*must be") as caught:
            inventory.load(path)
            pytest.fail(f"{section}.{key} = {value!r} was accepted")
        assert str(caught.value).count("\n") == 1, "one message, one line for the one bad key"


# -- kit run's options and a notebook's parameters -----------------------------------------------------

PLAN_FIELDS = {
    "sut_address": hostile("10.0.0.2"),
    "peer_host": hostile("bench@client1.lab:22"),
    "sut_host": hostile("root@server1.lab:22"),
    "sut_docker_socket": hostile("/run/docker.sock"),
    "ssh_key": ["key\nid", "key\x00"],
    "known_hosts": ["hosts\nid", "hosts\x00"],
}
REMOTE = {"peer": "remote", "peer_host": "bench@client1.lab", "sut_address": "10.0.0.2"}


@pytest.mark.parametrize("field", PLAN_FIELDS)
def test_a_plan_field_with_shell_metacharacters_is_refused_naming_it(field):
    """`kitlib.plan` is what every notebook's parameters go through (and `kit run`)."""
    base = {**REMOTE, "sut_host": "root@server1.lab"} if field in ("sut_host", "sut_docker_socket") else REMOTE
    assert kitlib.plan("redis", environments=["native"], **base).experiment == "redis"
    for value in PLAN_FIELDS[field]:
        with pytest.raises(PlanError, match=rf"\n  {field}: must be") as caught:
            kitlib.plan("redis", environments=["native"], **{**base, field: value})
            pytest.fail(f"{field}={value!r} was accepted")
        assert str(caught.value).count("\n") == 1


def test_a_plan_file_with_a_hostile_address_is_refused(tmp_path):
    """A notebook handed `plan_file` validates it again: a plan.json edited by hand is no way around."""
    from kitlib.measure.run.plan_file import load_plan

    plan = kitlib.plan("redis", environments=["native"], **REMOTE).model_dump(mode="json")
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"plan": {**plan, "sut_address": "10.0.0.2; touch /tmp/x"}}))
    with pytest.raises(PlanError, match=r"sut_address: must be an IP address"):
        load_plan(path)


@pytest.mark.parametrize(
    ("option", "field"), [("--sut-address", "sut_address"), ("--peer-host", "peer_host"), ("--sut-host", "sut_host")]
)
def test_kit_run_refuses_a_hostile_option_naming_it(option, field, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("KIT_RESULTS", str(tmp_path / "results"))
    given = {"--peer": "remote", "--peer-host": "bench@client1.lab", "--sut-address": "10.0.0.2"}
    for value in PLAN_FIELDS[field]:
        options = {**given, option: value}
        argv = ["run", "redis", "--env", "native", *(f"{k}={v}" for k, v in options.items()), "--dry-run"]
        assert main(argv) == 2, value
        captured = capsys.readouterr()
        assert captured.out == "", "no plan printed"
        assert f"\n  {field}: must be" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("address", ["10.0.0.2; touch {mark}", "$(touch {mark})"])
@pytest.mark.parametrize("mode", ["--dry-run", "--no-notebook"])
def test_an_inventory_address_with_a_semicolon_or_substitution_stops_kit_run_before_anything(tmp_path, address, mode):
    """The real entry point, as a user types it: refused with the key's name, nothing started or written."""
    mark = tmp_path / "injected"
    path = inventory_with(tmp_path, "sut", "address", address.format(mark=mark))
    results = tmp_path / "results"
    done = subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "run", "redis", "--hosts", str(path), mode],
        cwd=ROOT,
        env={**os.environ, "KIT_RESULTS": str(results), "KIT_SCRATCH": str(tmp_path / "scratch")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "sut.address: must be an IP address or a DNS host name" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not mark.exists() and not results.exists() and not (tmp_path / "scratch").exists()
