"""Unit tests are pure: each runs with no Docker socket and no `ip` (tests/unit/conftest.py), and one that
reaches for an engine, a namespace or a server fails, naming the call. These tests show the guard does
what every other unit test relies on."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host.docker_engine import docker_client

from .conftest import DEAD_DOCKER, FORBIDDEN


def test_there_is_no_docker_socket_and_no_ip(_pure):
    assert os.environ["DOCKER_HOST"] == DEAD_DOCKER and not os.path.exists(DEAD_DOCKER.removeprefix("unix://"))
    for program in FORBIDDEN:
        assert shutil.which(program) == str(_pure.bin / program)


def test_a_child_calling_ip_by_name_meets_a_tripwire_that_fails_the_test(_pure):
    with _pure.expected() as calls:
        done = subprocess.run(["sh", "-c", "ip netns add kit-unit-probe"], capture_output=True, text=True)
    assert done.returncode == 127 and "not available to unit tests" in done.stderr
    assert calls == ["ip netns add kit-unit-probe"]


@pytest.mark.parametrize("program", ["/usr/sbin/ip", "docker", "/usr/bin/nsenter"])
def test_this_process_starting_one_by_path_or_name_is_refused(_pure, program):
    with _pure.expected() as calls, pytest.raises(PermissionError, match="unit tests may not use"):
        subprocess.run([program, "--version"], capture_output=True)
    assert calls == [os.path.basename(program)]


def test_no_engine_answers_and_none_is_reached_past_docker_host(_pure):
    with _pure.expected() as calls, pytest.raises(EnvironmentUnavailable, match="no Docker engine answers"):
        docker_client()
    assert calls == [], "finding no engine at the dead socket is what a machine without Docker does"
    for path in ("/var/run/docker.sock", "/run/docker.sock"):
        with _pure.expected() as calls, socket.socket(socket.AF_UNIX) as sock, pytest.raises(PermissionError):
            sock.connect(path)
        assert calls == [f"the Docker socket {path}"]


@pytest.mark.parametrize("fixture", ["docker_client", "root_netns", "bench_image", "namespace_host", "client_host"])
def test_the_fixtures_of_the_real_things_fail_a_unit_test(request, fixture):
    with pytest.raises(pytest.fail.Exception, match="move it to tests/integration"):
        request.getfixturevalue(fixture)
