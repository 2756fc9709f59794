"""`native` on a remote host over SSH (fabric), with pinned host keys; here the remote is an sshd on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import kitlib
from kitlib.core.errors import EnvironmentUnavailable

from ..conftest import plan_session

pytestmark = [pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sshd(tmp_path):
    """A real sshd on 127.0.0.1 with its own host key and one authorized client key."""
    binary = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(binary).exists() or not shutil.which("ssh-keygen"):
        pytest.skip("openssh-server is not installed")
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True)
    (tmp_path / "authorized_keys").write_text((tmp_path / "client.pub").read_text())
    port = _free_port()
    Path("/run/sshd").mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [
            binary,
            "-D",
            "-e",
            "-p",
            str(port),
            "-o",
            "ListenAddress=127.0.0.1",
            "-h",
            str(tmp_path / "host"),
            "-o",
            f"AuthorizedKeysFile={tmp_path / 'authorized_keys'}",
            "-o",
            "StrictModes=no",
            "-o",
            "PasswordAuthentication=no",
            "-o",
            f"PidFile={tmp_path / 'sshd.pid'}",
            "-o",
            "PermitRootLogin=yes",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    host_key = (tmp_path / "host.pub").read_text().split()
    (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key[0]} {host_key[1]}\n")
    (tmp_path / "empty_known_hosts").write_text("")
    yield {
        "target": f"root@127.0.0.1:{port}",
        "key": str(tmp_path / "client"),
        "known_hosts": str(tmp_path / "known_hosts"),
        "empty": str(tmp_path / "empty_known_hosts"),
    }
    proc.terminate()
    proc.wait(timeout=10)


def test_redis_on_a_remote_native_host(sshd, tmp_path):
    plan = kitlib.plan(
        "redis",
        environments=["native"],
        repetitions=1,
        clients=[1, 4],
        requests=5000,
        sut_host=sshd["target"],
        ssh_key=sshd["key"],
        known_hosts=sshd["known_hosts"],
    )
    result = kitlib.run(plan, results_root=tmp_path / "results", progress=False)
    assert result.failures.empty, result.failures.to_string()
    mix = result.records[(result.records["op"] == "mix") & (result.records["metric"] == "throughput")]
    assert sorted(mix["clients"]) == [1, 4] and (mix["value"] > 0).all()
    session = plan_session(result.root)
    assert session["environments"]["native"]["remote_host"] == sshd["target"]
    remote = session["sut_hosts"][sshd["target"]]
    assert set(result.records["host"]) == {remote["host_id"]}, "records name the machine that ran the server"
    assert remote["os"]["kernel"] and remote["cpu"]["logical_cpus"] >= 1
    assert all(p.startswith("remote:") for p in result.records["peer"])
    assert session["peer"]["kind"] == "local" and session["peer"]["host_address"] == "127.0.0.1"
    for port in session["layout"]["ports"]:  # the remote server is stopped: nothing listens on its port
        listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
        assert listening.strip() == "", listening
    assert not list(Path("/var/tmp").glob(f"{session['run_label']}-native-*")), "remote scratch removed"


def test_unknown_host_key_is_refused(sshd, tmp_path):
    from kitlib.measure.host import ssh

    with pytest.raises(EnvironmentUnavailable, match="host keys are pinned"):
        ssh.connect(sshd["target"], key_filename=sshd["key"], known_hosts=sshd["empty"])


def test_a_remote_system_under_test_s_options_are_held_to_its_own_cpus_and_nodes(sshd, tmp_path):
    """`+cpus0-99` and `+numa7` on the remote host are refused from the facts its kernel gives over SSH,
    before anything starts or any folder is written; options that fit it pass that check."""
    from kitlib.core.errors import PlanError
    from kitlib.measure.run import remote_options

    machine = dict(sut_host=sshd["target"], ssh_key=sshd["key"], known_hosts=sshd["known_hosts"])
    for label, said in (
        ("docker-host-volume+cpus0-99", "are not online on the system under test"),
        ("docker-host-volume+numa7", "has no NUMA node 7"),
    ):
        plan = kitlib.plan("redis", environments=["native", label], repetitions=1, **machine)
        with pytest.raises(PlanError, match=said):
            kitlib.run(plan, results_root=tmp_path / "results", progress=False)
    assert not (tmp_path / "results").exists()
    fits = kitlib.plan("redis", environments=["native", "docker-host-volume+cpus0"], repetitions=1, **machine)
    remote_options.refuse_beyond_remote(fits)  # its CPU 0 is online there: nothing to refuse


def test_remote_sut_accepts_native_and_docker_only():
    from kitlib.core.errors import PlanError

    with pytest.raises(PlanError, match="runs `native` and `docker-\\*` only"):
        kitlib.plan("redis", environments=["native", "kvm"], sut_host="root@example:22")


def test_known_hosts_markers_against_a_real_sshd(sshd, tmp_path):
    """A CA line beside the pin is no obstacle; the same key marked @revoked is refused though pinned."""
    from kitlib.measure.host import ssh

    pin = Path(sshd["known_hosts"]).read_text()
    _, kind, blob = pin.split()
    (tmp_path / "ca").write_text(f"@cert-authority *.lab {kind} {blob}\n" + pin)
    connection = ssh.connect(sshd["target"], key_filename=sshd["key"], known_hosts=str(tmp_path / "ca"))
    assert ssh.run(connection, ["true"], timeout=30)[0] == 0
    connection.close()
    (tmp_path / "revoked").write_text(pin + f"@revoked * {kind} {blob}\n")
    with pytest.raises(EnvironmentUnavailable, match="refused: its host key ssh-ed25519 .* is marked @revoked"):
        ssh.connect(sshd["target"], key_filename=sshd["key"], known_hosts=str(tmp_path / "revoked"))
    Path(sshd["key"]).chmod(0o644)
    with pytest.raises(EnvironmentUnavailable, match="permissions 0644 let others read it"):
        ssh.connect(sshd["target"], key_filename=sshd["key"], known_hosts=sshd["known_hosts"])
