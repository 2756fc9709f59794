"""SSH connections with fabric for remote hosts (a remote system under test, a remote peer).

Host keys are pinned: the host must be in the given known_hosts file (or the user's); an unknown
or changed key is refused, never accepted blindly.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from kitlib.errors import EnvironmentUnavailable


def connect(target: str, *, key_filename: str | None = None, known_hosts: str | None = None, timeout: float = 15.0):
    """An open fabric Connection to `user@host:port`, refusing unknown host keys."""
    import paramiko
    from fabric import Connection

    connect_kwargs = {"key_filename": key_filename} if key_filename else {}
    connection = Connection(target, connect_timeout=timeout, connect_kwargs=connect_kwargs)
    client = connection.client
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    if known_hosts:
        client.load_host_keys(str(Path(known_hosts).expanduser()))
    else:
        client.load_system_host_keys()
    pinned_in = known_hosts or "~/.ssh/known_hosts"
    try:
        connection.open()
    except paramiko.BadHostKeyException as exc:
        raise EnvironmentUnavailable(
            f"ssh {target}: refused: its host key changed ({exc.key.get_name()} {exc.key.get_fingerprint().hex()}) "
            f"since it was pinned in {pinned_in} (host keys are pinned: find out why before replacing it)"
        ) from exc
    except paramiko.SSHException as exc:
        if "not found in known_hosts" in str(exc):
            raise EnvironmentUnavailable(
                f"ssh {target}: refused: its host key is not in {pinned_in} (host keys are pinned: compare its "
                "fingerprint with the host's own `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`, then add it)"
            ) from exc
        raise EnvironmentUnavailable(f"ssh {target}: {exc} (host keys are pinned: add it to known_hosts)") from exc
    except OSError as exc:
        raise EnvironmentUnavailable(f"ssh {target}: cannot connect: {exc}") from exc
    return connection


def run(connection, argv: list[str], timeout: float) -> tuple[int | None, str]:
    """Run argv remotely; (returncode, combined output), or (None, output) when it overran `timeout`."""
    from invoke.exceptions import CommandTimedOut

    try:
        result = connection.run(shlex.join(argv), hide=True, warn=True, timeout=timeout, pty=False, in_stream=False)
    except CommandTimedOut as exc:
        return None, exc.result.stdout + exc.result.stderr
    return result.exited, result.stdout + result.stderr
