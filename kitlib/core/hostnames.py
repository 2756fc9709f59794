"""Names of machines, users, ports and sockets given from outside (an inventory, `kit run`'s options,
a notebook's parameters), checked where they enter: they end up on command lines, in proxy
configurations and in SSH targets, so anything but the plain form is refused before anything starts.

An address is an IP address or a DNS host name (RFC 1123 labels); a user a POSIX user name; a port
1..65535; a socket an absolute path of plain characters; an SSH target `[user@]host[:port]`. Each
check raises ValueError saying what is allowed: pydantic turns it into the field's error, and the
plan and the inventory into one PlanError naming the field.
"""

from __future__ import annotations

import ipaddress
import os
import re

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
_SOCKET = re.compile(r"/[A-Za-z0-9._@+/-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_REMOTE_PATH = re.compile(r"/[A-Za-z0-9._+/-]*")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")

ADDRESS_RULE = "an IP address or a DNS host name (letters, digits and `-` in dot-separated labels)"
HOST_RULE = "a DNS host name or an IPv4 address"
USER_RULE = "a POSIX user name (a letter or `_`, then letters, digits, `.`, `_`, `-`; at most 32)"
PORT_RULE = "a port number 1..65535"
SOCKET_RULE = "an absolute path of letters, digits and `. _ @ + / -` (no `unix://`)"
REMOTE_PATH_RULE = "an absolute path of letters, digits and `. _ + / -` (no `..`)"
NAME_RULE = "letters, digits, `.`, `_` and `-` (at most 63), starting with a letter or digit"


def address(value: str) -> str:
    """An IP address (v4 or v6, no zone) or a DNS host name, else ValueError."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be {ADDRESS_RULE}")
    if ":" in value:
        try:
            ipaddress.IPv6Address(value)
        except ValueError:
            raise ValueError(f"must be {ADDRESS_RULE}") from None
        if "%" in value:  # the zone after `%` is free text to `ipaddress`
            raise ValueError(f"must be {ADDRESS_RULE} (an IPv6 address without a `%zone`)")
        return value
    return host_name(value, ADDRESS_RULE)


def host_name(value: str, rule: str = HOST_RULE) -> str:
    """A DNS host name of RFC 1123 labels or a dotted IPv4 address, else ValueError."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be {rule}")
    labels = value.removesuffix(".").split(".")
    if len(value) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"must be {rule}")
    if all(label.isdigit() for label in labels):  # numbers only: an IPv4 address or nothing
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            raise ValueError(f"must be {rule} (numbers only make an IPv4 address, and this is none)") from None
    return value


def user(value: str) -> str:
    """A POSIX user name, else ValueError."""
    if not isinstance(value, str) or not _USER.fullmatch(value):
        raise ValueError(f"must be {USER_RULE}")
    return value


def port(value: int | str) -> int:
    """A TCP port 1..65535 (an integer, or its decimal digits), else ValueError."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise ValueError(f"must be {PORT_RULE}")
    return value


def ssh_target(value: str) -> str:
    """`[user@]host[:port]` as fabric takes it; IPv6 hosts are refused (fabric cannot tell their port)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be [user@]host[:port] with host {HOST_RULE}")
    name, at, rest = value.rpartition("@")
    host, colon, number = rest.partition(":")
    try:
        part = "the user"
        if at:
            user(name)
        part = "the host"
        host_name(host)
        part = "the port"
        if colon:
            port(number)
    except ValueError as exc:
        raise ValueError(f"must be [user@]host[:port]: {part} {exc}") from None
    return value


def socket_path(value: str) -> str:
    """The absolute path of a unix socket, of plain characters, else ValueError."""
    if not isinstance(value, str) or not _SOCKET.fullmatch(value) or "//" in value:
        raise ValueError(f"must be {SOCKET_RULE}")
    return value


def file_path(value: str | os.PathLike) -> str | os.PathLike:
    """A local file's path: free text (it is handed to Python, never to a shell) without control characters."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str) or not text or _CONTROL.search(text):
        raise ValueError("must be a file's path without control characters (newline, tab, NUL)")
    return value


def remote_path(value: str) -> str:
    """A path on another machine (it reaches that machine's shell quoted, and a job script), of plain
    characters and absolute, never climbing with `..`, else ValueError."""
    if not isinstance(value, str) or not _REMOTE_PATH.fullmatch(value) or "//" in value or "/../" in f"{value}/":
        raise ValueError(f"must be {REMOTE_PATH_RULE}")
    return value


def is_name(value: object) -> bool:
    """Whether `value` is a plain name: a file name, a Slurm partition, a fleet host's label."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value))


def name(value: str | None) -> str | None:
    """A plain name (None passes), else ValueError."""
    if value is not None and not is_name(value):
        raise ValueError(f"must be {NAME_RULE}")
    return value
