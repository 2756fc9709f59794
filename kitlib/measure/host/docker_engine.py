"""The local Docker engine: one way to reach it, used by environments, VMs (their image export), clean-up
and host checks alike."""

from __future__ import annotations

from kitlib.core.errors import EnvironmentUnavailable


def docker_client():
    """A client for the local engine, or EnvironmentUnavailable saying why there is none."""
    try:
        import docker

        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except Exception as exc:  # no socket, permission denied, daemon down
        raise EnvironmentUnavailable(f"no Docker engine answers: {str(exc).splitlines()[0][:200]}") from exc
