"""SSH files read as OpenSSH reads them: keys others can read refused, known_hosts markers kept."""

from __future__ import annotations

import subprocess

import paramiko
import pytest

import kitlib
from kitlib.core.errors import EnvironmentUnavailable, PlanError
from kitlib.measure.host import ssh, ssh_files


def _keygen(folder, name: str) -> tuple:
    """A real ed25519 key pair: (private key path, public key line's type and blob)."""
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    kind, blob, *_ = (folder / f"{name}.pub").read_text().split()
    return path, kind, blob


def test_a_private_key_others_can_read_is_refused_as_openssh_refuses_it(tmp_path):
    key, *_ = _keygen(tmp_path, "id_ed25519")
    assert ssh_files.check_private_key(key) == key, "ssh-keygen writes it 0600"
    for mode in (0o644, 0o640, 0o604, 0o660):
        key.chmod(mode)
        with pytest.raises(PlanError, match=f"permissions {mode:04o} let others read it"):
            ssh_files.check_private_key(key)
        with pytest.raises(PlanError, match="ssh_key: ssh key .* refused"):
            kitlib.plan("redis", environments=["native"], sut_host="root@192.0.2.1:22", ssh_key=str(key))
        with pytest.raises(EnvironmentUnavailable, match="refused"):
            ssh.connect("root@192.0.2.1:22", key_filename=str(key), known_hosts=str(tmp_path / "none"))
    with pytest.raises(PlanError, match="cannot read it"):
        ssh_files.check_private_key(tmp_path / "absent")


def test_known_hosts_markers_are_read_not_a_traceback(tmp_path):
    _, kind, pinned = _keygen(tmp_path, "host")
    _, _, revoked = _keygen(tmp_path, "stolen")
    _, _, ca = _keygen(tmp_path, "ca")
    file = tmp_path / "known_hosts"
    file.write_text(
        f"# pins\n10.0.0.2 {kind} {pinned}\n"
        f"@revoked * {kind} {revoked}\n"
        f"10.0.0.3 {kind} {revoked}\n"
        f"@cert-authority *.lab {kind} {ca}\n"
        "@unknown-marker 10.0.0.9 ssh-ed25519 AAAA\n"
        "a line paramiko cannot read\n"
    )
    with pytest.raises(Exception) as paramikos_own:  # what loading it directly did
        paramiko.HostKeys(str(file))
    print(f"paramiko.HostKeys: {type(paramikos_own.value).__name__}")
    known = ssh_files.load_known_hosts(file)
    assert [e.hostnames for e in known.entries] == [["10.0.0.2"], ["10.0.0.3"]]
    assert known.cert_authorities == 1 and len(known.revoked) == 1
    host_keys = paramiko.HostKeys()
    known.install(host_keys)
    assert host_keys.lookup("10.0.0.2") is not None
    assert host_keys.lookup("10.0.0.3") is None, "a revoked key is never pinned, whatever line lists it"
    assert host_keys.lookup("server.lab") is None, "a CA is not a host key"
    policy = ssh_files.reject_policy(known, str(file))
    stolen = known.revoked[0]
    with pytest.raises(paramiko.SSHException, match="marked @revoked in"):
        policy.missing_host_key(None, "10.0.0.3", stolen)
    assert not known.is_revoked(known.entries[0].key)


def test_a_missing_known_hosts_file_is_named(tmp_path):
    with pytest.raises(EnvironmentUnavailable, match=f"known_hosts {tmp_path / 'absent'}: cannot read it"):
        ssh_files.load_known_hosts(tmp_path / "absent")
