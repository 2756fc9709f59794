"""SSH connections with fabric for remote hosts (a remote system under test, a remote peer).

Host keys are pinned: the host must be in the given known_hosts file (or the user's); an unknown,
changed or `@revoked` key is refused, never accepted blindly, and so is a private key others can read
(`kitlib.measure.host.ssh_files`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import ssh_files

#: seconds between keepalives, and after how long without an answer a host counts as lost
KEEPALIVE_S = 5
LOST_AFTER_S = 30.0


def connect(target: str, *, key_filename: str | None = None, known_hosts: str | None = None, timeout: float = 15.0):
    """An open fabric Connection to `user@host:port`, refusing unknown host keys."""
    import paramiko
    from fabric import Connection

    if key_filename:
        ssh_files.check_private_key(key_filename, EnvironmentUnavailable)
    connect_kwargs = {"key_filename": key_filename} if key_filename else {}
    connection = Connection(target, connect_timeout=timeout, connect_kwargs=connect_kwargs)
    client = connection.client
    pinned_in = known_hosts or "~/.ssh/known_hosts"
    pins = Path(pinned_in).expanduser()
    known = ssh_files.load_known_hosts(pins) if known_hosts or pins.exists() else ssh_files.KnownHosts()
    known.install(client.get_host_keys())
    client.set_missing_host_key_policy(ssh_files.reject_policy(known, pinned_in))
    try:
        connection.open()
    except paramiko.BadHostKeyException as exc:
        raise EnvironmentUnavailable(
            f"ssh {target}: refused: its host key changed ({exc.key.get_name()} {exc.key.get_fingerprint().hex()}) "
            f"since it was pinned in {pinned_in} (host keys are pinned: find out why before replacing it)"
        ) from exc
    except paramiko.SSHException as exc:
        if ssh_files.REVOKED in str(exc):
            raise EnvironmentUnavailable(f"ssh {target}: refused: {exc}") from exc
        if "not found in known_hosts" in str(exc):
            raise EnvironmentUnavailable(
                f"ssh {target}: refused: its host key is not in {pinned_in} (host keys are pinned: compare its "
                "fingerprint with the host's own `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`, then add it)"
            ) from exc
        if "banner" in str(exc):  # a port that takes the connection but does not speak SSH, or a host gone
            raise EnvironmentUnavailable(f"ssh {target}: no SSH server answered ({exc})") from exc
        raise EnvironmentUnavailable(f"ssh {target}: {exc}") from exc
    except OSError as exc:
        raise EnvironmentUnavailable(f"ssh {target}: cannot connect: {exc}") from exc
    notice_loss(connection.client.get_transport())
    return connection


def notice_loss(transport) -> None:
    """A host that stops answering (switched off, its network gone) ends the connection after about
    LOST_AFTER_S instead of the kernel's quarter hour of retransmissions: a keepalive every few seconds
    gives the link something to acknowledge, and TCP gives up on data unacknowledged that long."""
    import socket

    if transport is None:
        return
    transport.set_keepalive(KEEPALIVE_S)
    try:
        transport.sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_USER_TIMEOUT"):  # Linux
            transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, int(LOST_AFTER_S * 1000))
    except (OSError, AttributeError):  # not a TCP socket (a proxy command): the kernel's own timeouts apply
        pass


def alive(connection) -> bool:
    """Whether the connection's transport still stands (False after the host was lost)."""
    transport = connection.client.get_transport()
    return bool(transport and transport.is_active())


def run(connection, argv: list[str], timeout: float) -> tuple[int | None, str]:
    """Run argv remotely; (returncode, combined output), or (None, output) when it overran `timeout`."""
    from invoke.exceptions import CommandTimedOut

    try:
        result = connection.run(shlex.join(argv), hide=True, warn=True, timeout=timeout, pty=False, in_stream=False)
    except CommandTimedOut as exc:
        return None, exc.result.stdout + exc.result.stderr
    return result.exited, result.stdout + result.stderr
