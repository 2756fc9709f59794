"""The fleet file is hostile input: every host, path and name is checked before anything connects, and
`kit fleet run` refuses the options a fleet decides itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitlib import cli, fleet
from kitlib.core.errors import PlanError

GOOD_HOST = '[[hosts]]\nname = "lab-a"\nhost = "10.0.0.2"\nkit = "/opt/kit/.venv/bin/kit"\n'


def write(folder: Path, hosts: str, head: str = "") -> Path:
    (folder / "known").write_text("")
    path = folder / "fleet.toml"
    path.write_text(f'{head}[ssh]\nknown_hosts = "known"\n\n{hosts}')
    return path


def test_a_good_fleet_loads_with_its_paths_from_the_files_folder(tmp_path):
    loaded = fleet.load(write(tmp_path, GOOD_HOST + '\n[[hosts]]\nhost = "server2.lab"\nport = 2222\n'))
    assert [h.label for h in loaded.hosts] == ["lab-a", "server2.lab"]
    assert [h.target for h in loaded.hosts] == ["root@10.0.0.2:22", "root@server2.lab:2222"]
    assert loaded.ssh.known_hosts == tmp_path / "known"
    assert loaded.hosts[1].kit == "kit" and loaded.hosts[1].results == "/var/tmp/kit-fleet"


@pytest.mark.parametrize(
    ("hosts", "named"),
    [
        ('[[hosts]]\nhost = "10.0.0.2; rm -rf /"\n', "hosts.0.host"),
        ('[[hosts]]\nhost = "root@10.0.0.2"\n', "hosts.0.host"),
        ('[[hosts]]\nhost = "a"\nuser = "$(id)"\n', "hosts.0.user"),
        ('[[hosts]]\nhost = "a"\nkit = "kit; reboot"\n', "hosts.0.kit"),
        ('[[hosts]]\nhost = "a"\nkit = "relative/kit"\n', "hosts.0.kit"),
        ('[[hosts]]\nhost = "a"\nresults = "/tmp/a b"\n', "hosts.0.results"),
        ('[[hosts]]\nhost = "a"\nresults = "/tmp/../etc"\n', "hosts.0.results"),
        ('[[hosts]]\nhost = "a"\nname = "../x"\n', "hosts.0.name"),
        ('[[hosts]]\nhost = "a"\nshell = "bash"\n', "hosts.0.shell"),
        ('[[hosts]]\nhost = "a"\n[[hosts]]\nhost = "a"\n', "named twice"),
        ("", "hosts"),
    ],
)
def test_a_bad_fleet_is_refused_naming_the_key(tmp_path, hosts, named):
    with pytest.raises(PlanError, match="invalid fleet file") as error:
        fleet.load(write(tmp_path, hosts))
    assert named in str(error.value)


def test_the_slurm_backend_is_refused_until_it_exists_and_missing_files_are_named(tmp_path):
    with pytest.raises(PlanError, match="Slurm backend is not built"):
        fleet.load(write(tmp_path, GOOD_HOST, head='backend = "slurm"\n'))
    path = write(tmp_path, GOOD_HOST)
    (tmp_path / "known").unlink()
    with pytest.raises(PlanError, match="known_hosts .* does not exist"):
        fleet.load(path)
    with pytest.raises(PlanError, match="cannot read"):
        fleet.load(tmp_path / "absent.toml")
    (tmp_path / "broken.toml").write_text("[ssh\n")
    with pytest.raises(PlanError, match="not valid TOML"):
        fleet.load(tmp_path / "broken.toml")


@pytest.mark.parametrize("option", ["--sut-host", "--peer-host=a@b", "--hosts", "--no-notebook"])
def test_options_the_fleet_decides_are_refused(option):
    with pytest.raises(PlanError, match="the fleet's to decide"):
        fleet.checked_run_options(["--env", "native", option])


def test_the_command_refuses_an_unknown_experiment_or_option_before_connecting(tmp_path, capsys):
    path = write(tmp_path, GOOD_HOST)
    assert cli.main(["fleet", "run", str(path), "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        cli.main(["fleet", "run", str(path), "redis", "--", "--profile", "quick", "--no-such-option"])
    assert exited.value.code == 2
    assert cli.main(["fleet", "run", str(path), "redis", "--", "--sut-host", "a@b"]) == 2
    assert "fleet's to decide" in capsys.readouterr().err
