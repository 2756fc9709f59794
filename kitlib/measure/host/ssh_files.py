"""The SSH files a study names, read as OpenSSH reads them: a private key others can read is refused,
and known_hosts markers keep their meaning.

OpenSSH refuses a private key readable by its group or others ("UNPROTECTED PRIVATE KEY FILE"):
whoever could read it may already have used it. In known_hosts, a line marked `@revoked` names a key
that must never be accepted (even if another line lists it), and `@cert-authority` names a CA that
signs host certificates: neither is a host key to pin.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kitlib.core.errors import EnvironmentUnavailable, PlanError

REVOKED, CERT_AUTHORITY = "@revoked", "@cert-authority"


def check_private_key(path: str | Path, error: type[Exception] = PlanError) -> Path:
    """The key's path, or `error` naming it when it is missing, not a file, or readable or writable
    by its group or others (as OpenSSH refuses it)."""
    key = Path(path).expanduser()
    try:
        info = key.stat()
    except OSError as exc:
        raise error(f"ssh key {key}: cannot read it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise error(f"ssh key {key}: not a file")
    if info.st_mode & 0o077:
        raise error(
            f"ssh key {key}: refused: its permissions {stat.S_IMODE(info.st_mode):04o} let others read it "
            f"(OpenSSH refuses such a key too); `chmod 600 {key}` if it is still secret, else replace it"
        )
    return key


@dataclass
class KnownHosts:
    """known_hosts read line by line: pinned host keys, revoked keys, and how many CA lines were set aside."""

    entries: list[Any] = field(default_factory=list)  # paramiko HostKeyEntry
    revoked: list[Any] = field(default_factory=list)  # paramiko PKey
    cert_authorities: int = 0

    def is_revoked(self, key: Any) -> bool:
        return any(key == other for other in self.revoked)

    def install(self, host_keys: Any) -> None:
        """Add the pinned keys that are not revoked to a paramiko HostKeys."""
        for entry in self.entries:
            if self.is_revoked(entry.key):
                continue
            for name in entry.hostnames:
                host_keys.add(name, entry.key.get_name(), entry.key)


def load_known_hosts(path: str | Path) -> KnownHosts:
    """Every line of a known_hosts file: `@revoked` keys kept apart (refused for every host), `@cert-authority`
    lines set aside (a CA is not a host key; host certificates are not verified here, so such hosts are
    refused as unpinned), lines paramiko cannot read skipped as OpenSSH skips them."""
    from paramiko.hostkeys import HostKeyEntry, InvalidHostKey
    from paramiko.ssh_exception import SSHException

    file = Path(path).expanduser()
    try:
        text = file.read_text()
    except OSError as exc:
        raise EnvironmentUnavailable(f"known_hosts {file}: cannot read it: {exc.strerror or exc}") from None
    found = KnownHosts()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        marker = line.split(None, 1)[0] if line.startswith("@") else None
        if marker is not None:
            line = line[len(marker) :].strip()
        if marker == CERT_AUTHORITY:
            found.cert_authorities += 1
            continue
        if marker not in (None, REVOKED):
            continue  # a marker OpenSSH does not know: it ignores the line
        try:
            entry = HostKeyEntry.from_line(line, number)
        except (SSHException, InvalidHostKey, ValueError):  # a line it cannot read is skipped
            continue
        if entry is None:
            continue
        if marker == REVOKED:
            found.revoked.append(entry.key)
        else:
            found.entries.append(entry)
    return found


def reject_policy(known: KnownHosts, pinned_in: str):
    """paramiko's RejectPolicy, naming a revoked key as revoked rather than unknown."""
    import paramiko

    class Policy(paramiko.RejectPolicy):
        def missing_host_key(self, client, hostname, key):
            if known.is_revoked(key):
                raise paramiko.SSHException(
                    f"its host key {key.get_name()} {key.get_fingerprint().hex()} is marked {REVOKED} in {pinned_in}"
                )
            return super().missing_host_key(client, hostname, key)

    return Policy()
