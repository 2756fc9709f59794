"""An inventory: the machines of a study in one small TOML file, validated before anything connects.

    # study.toml
    [ssh]
    key = "~/.ssh/kit_ed25519"            # private key for every host (optional: the SSH agent's)
    known_hosts = "~/.ssh/kit_known_hosts"  # host keys are pinned: every host must be in it

    [sut]                                  # the system under test
    host = "server1.lab"                   # as SSH reaches it
    user = "root"
    port = 22
    address = "10.0.0.2"                   # as the client reaches it (default: host)
    docker_socket = "/run/docker.sock"     # optional: its engine (default: the SSH session's DOCKER_HOST)

    [client]                               # optional: the load generator; absent = this machine
    host = "client1.lab"
    user = "root"

Hosts and addresses must be IP addresses or DNS host names, users POSIX user names, ports 1..65535 and
the socket a plain absolute path (`kitlib.core.hostnames`): anything else is refused, naming the key, before
anything connects. Relative paths are taken from the inventory's folder. `kit run --hosts study.toml`, `kitlib.plan(...,
hosts="study.toml")` and `kit hosts check study.toml` read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kitlib.core import hostnames
from kitlib.core.errors import PlanError

Model = TypeVar("Model", bound=BaseModel)


class SshSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: Path | None = Field(None, description="private key used for every host")
    known_hosts: Path = Field(description="known_hosts file pinning every host's key")

    _paths = field_validator("key", "known_hosts", mode="before")(
        classmethod(lambda cls, value: None if value is None else hostnames.file_path(value))
    )


class Machine(BaseModel):
    """One host reached over SSH."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(description="host name or IPv4 address SSH reaches")
    user: str = Field("root")
    port: int = Field(22, description="SSH port 1..65535")

    @field_validator("host", mode="before")
    @classmethod
    def _host(cls, value: Any) -> str:
        if isinstance(value, str) and any(c in value for c in "@:"):
            raise ValueError(f"give the host name alone (user and port have their own keys), got {value!r}")
        return hostnames.host_name(value)

    _user = field_validator("user", mode="before")(classmethod(lambda cls, value: hostnames.user(value)))
    _port = field_validator("port", mode="before")(classmethod(lambda cls, value: hostnames.port(value)))

    @property
    def target(self) -> str:
        """`user@host:port`, as fabric and the plan take it."""
        return f"{self.user}@{self.host}:{self.port}"


class SutMachine(Machine):
    address: str | None = Field(None, description="the SUT's address as the client reaches it (default: host)")
    docker_socket: str | None = Field(None, description="its Docker engine's socket (default: the session's)")

    _address = field_validator("address", mode="before")(classmethod(lambda cls, value: hostnames.address(value)))
    _socket = field_validator("docker_socket", mode="before")(
        classmethod(lambda cls, value: hostnames.socket_path(value))
    )

    @property
    def client_address(self) -> str:
        return self.address or self.host


class Inventory(BaseModel):
    """The machines of a study: the system under test and, optionally, a client that is not this machine."""

    model_config = ConfigDict(extra="forbid")

    ssh: SshSettings
    sut: SutMachine
    client: Machine | None = None
    #: the file it was read from (set by `load`)
    source: Path | None = None

    def hosts(self) -> dict[str, Machine]:
        """Role -> machine, for the machines reached over SSH."""
        return {"sut": self.sut, **({"client": self.client} if self.client else {})}

    def plan_fields(self) -> dict[str, Any]:
        """The plan's fields this inventory decides (see `Experiment.plan`)."""
        fields: dict[str, Any] = {
            "sut_host": self.sut.target,
            "sut_address": self.sut.client_address,
            "sut_docker_socket": self.sut.docker_socket,
            "ssh_key": str(self.ssh.key) if self.ssh.key else None,
            "known_hosts": str(self.ssh.known_hosts),
        }
        if self.client is not None:
            fields.update(peer="remote", peer_host=self.client.target)
        return fields


def load(path: str | Path) -> Inventory:
    """A validated inventory, or PlanError naming the file, the key and what is wrong."""
    path = Path(path).expanduser()
    return _resolved(read_model(path, Inventory, "hosts", "inventory"), path)


def read_model(path: Path, model: type[Model], prefix: str, kind: str) -> Model:
    """A TOML file validated as `model`, or PlanError (`prefix: …`) naming the file, every key that is
    wrong, what is wrong with it and the value given (the inventory's and the fleet file's reader)."""
    try:
        document = tomllib.loads(path.read_text())
    except OSError as exc:
        raise PlanError(f"{prefix}: cannot read the {kind} {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{prefix}: {path} is not valid TOML: {exc}") from None
    try:
        return model.model_validate(document)
    except ValidationError as error:
        lines = []
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"]) or kind
            given = f" (given: {item['input']!r})" if item["type"] != "missing" else ""
            lines.append(f"  {where}: {item['msg'].removeprefix('Value error, ')}{given}")
        raise PlanError(f"{prefix}: invalid {kind} {path}:\n" + "\n".join(lines)) from None


def _resolved(inventory: Inventory, path: Path) -> Inventory:
    """Paths taken from the inventory's folder, `~` expanded; the files must exist."""
    base = path.parent

    def resolve(value: Path) -> Path:
        value = value.expanduser()
        return value if value.is_absolute() else (base / value).resolve()

    ssh = SshSettings(
        key=resolve(inventory.ssh.key) if inventory.ssh.key else None, known_hosts=resolve(inventory.ssh.known_hosts)
    )
    for name, file in (("ssh.key", ssh.key), ("ssh.known_hosts", ssh.known_hosts)):
        if file is not None and not file.is_file():
            raise PlanError(f"hosts: invalid inventory {path}:\n  {name}: no such file {file}")
    return inventory.model_copy(update={"ssh": ssh, "source": path})
