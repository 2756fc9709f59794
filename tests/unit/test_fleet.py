"""The fleet file is hostile input: every host, path and name is checked before anything connects, and
`kit fleet run` refuses the options a fleet decides itself."""

from __future__ import annotations

import os
import stat
import subprocess
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


def test_missing_or_broken_files_are_named(tmp_path):
    path = write(tmp_path, GOOD_HOST)
    (tmp_path / "known").unlink()
    with pytest.raises(PlanError, match="known_hosts .* does not exist"):
        fleet.load(path)
    with pytest.raises(PlanError, match="cannot read"):
        fleet.load(tmp_path / "absent.toml")
    (tmp_path / "broken.toml").write_text("[ssh\n")
    with pytest.raises(PlanError, match="not valid TOML"):
        fleet.load(tmp_path / "broken.toml")


SLURM = 'backend = "slurm"\n[slurm]\nnodes = 2\nresults = "/shared/kit-fleet"\n'


def test_a_slurm_fleet_loads_and_takes_no_ssh_hosts(tmp_path):
    (tmp_path / "fleet.toml").write_text(SLURM + 'partition = "bench"\nkit = "/shared/kit/.venv/bin/kit"\n')
    loaded = fleet.load(tmp_path / "fleet.toml")
    assert loaded.slurm.nodes == 2 and loaded.slurm.partition == "bench" and loaded.slurm.queue_timeout == "1h"
    with pytest.raises(PlanError, match="neither"):
        fleet.load(write(tmp_path, GOOD_HOST, head='backend = "slurm"\n'))


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ('partition = "a;b"\n', "slurm.partition"),
        ('account = "$(id)"\n', "slurm.account"),
        ('kit = "kit; reboot"\n', "slurm.kit"),
        ('queue_timeout = "soon"\n', "slurm.queue_timeout"),
        ("nodes_per_task = 2\n", "slurm.nodes_per_task"),
    ],
)
def test_a_bad_slurm_fleet_is_refused_naming_the_key(tmp_path, extra, named):
    (tmp_path / "fleet.toml").write_text(SLURM + extra)
    with pytest.raises(PlanError, match="invalid fleet file") as error:
        fleet.load(tmp_path / "fleet.toml")
    assert named in str(error.value)
    (tmp_path / "fleet.toml").write_text(SLURM.replace("nodes = 2", "nodes = 0").replace("/shared", "shared"))
    with pytest.raises(PlanError, match="slurm.nodes") as error:
        fleet.load(tmp_path / "fleet.toml")
    assert "slurm.results" in str(error.value)


def test_the_job_script_hands_every_option_to_the_kit_verbatim_and_records_how_it_ended(tmp_path):
    """The script as Slurm would run it, with `echo` standing as the kit: what it prints is the argv the
    kit would get, so a hostile option reaches it as one word and never the shell."""
    import subprocess

    from kitlib import slurm

    settings = slurm.SlurmSettings(nodes=1, results=str(tmp_path), kit="/bin/echo")
    hostile = ["-p", "clients", "[1, 4]", "--env", "$(touch pwned); `id`"]
    script = tmp_path / "task.sh"
    script.write_text(slurm.task_script(settings, tmp_path / "label", "redis", hostile))
    env = {"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": "0", "SLURMD_NODENAME": "node-a"}
    done = subprocess.run(["sh", str(script)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    task = tmp_path / "label" / "task-0"
    assert done.returncode == 0, done.stderr
    said = (task / "kit.log").read_text().splitlines()
    assert said[0] == "run redis --no-notebook -p clients [1, 4] --env $(touch pwned); `id`"
    assert said[1] == f"bundle {task}/redis -o {task}/bundle.tar.gz"
    assert (task / "node").read_text() == "node-a\n" and (task / "exit").read_text() == "bundle 0\n"
    assert not (tmp_path / "pwned").exists()


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


def test_slurm_run_times_are_read_as_seconds_and_nothing_else_is_a_number():
    import math

    from kitlib import slurm

    assert slurm.run_seconds("00:00:35") == 35 and slurm.run_seconds("01:02:03") == 3723
    assert slurm.run_seconds("2-00:00:01") == 2 * 86400 + 1 and slurm.run_seconds("05:07") == 307
    for text in ("", "Unknown", "00:xx:01", "1:2:3:4", "a-00:00:01"):
        assert math.isnan(slurm.run_seconds(text)), text


def test_a_failure_is_told_in_the_kits_last_words_without_its_progress_bars():
    from kitlib.fleet_outcome import last_words

    said = "redis (quick):   0%|          | 0/6 [00:00<?, ?point/s]\rredis (quick):  17%|█▋ | 1/6 [00:09<00:45]\n"
    said += "kit: run stopped by SIGTERM; the rest is left\nkit clean removes what is left\n"
    assert last_words(said) == "kit: run stopped by SIGTERM; the rest is left | kit clean removes what is left"
    assert last_words("") == ""


def test_a_hosts_failure_reads_as_one_line_naming_a_librarys_error_by_its_type():
    from kitlib.core.errors import EnvironmentUnavailable
    from kitlib.fleet_outcome import failure_reason

    assert failure_reason(EnvironmentUnavailable("kit run\nexited 1")) == "kit run exited 1"
    assert failure_reason(ValueError("banner")) == "ValueError: banner"
    assert len(failure_reason(OSError("x" * 2000))) == 600


def _prepare(folder: Path) -> subprocess.CompletedProcess:
    """The remote check of a host's results folder, run here by the shell a host runs it with."""
    return subprocess.run(["sh", "-c", fleet.PRIVATE_ROOT, "sh", str(folder)], capture_output=True, text=True)


def test_a_hosts_results_folder_is_made_0700_and_refused_when_others_may_use_it(tmp_path):
    results = tmp_path / "var" / "tmp" / "kit-fleet"
    old = os.umask(0)
    try:
        assert _prepare(results).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(results.stat().st_mode) == 0o700
    os.chmod(results, 0o755)
    assert _prepare(results).returncode == 0, "a folder of this user's others cannot write is used"
    for mode in (0o775, 0o757, 0o1777):
        os.chmod(results, mode)
        done = _prepare(results)
        assert done.returncode == 3 and "may be written by others" in done.stdout, (oct(mode), done.stdout)
    os.chmod(results, 0o700)
    if os.geteuid() == 0:
        os.chown(results, 65534, 65534)
        done = _prepare(results)
        assert done.returncode == 3 and "owned by uid 65534, not 0" in done.stdout
    results.rmdir()
    results.symlink_to(tmp_path)
    done = _prepare(results)
    assert done.returncode == 3 and "not a folder" in done.stdout
