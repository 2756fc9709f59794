"""The nspawn environment's pure parts: the commands it builds, where its cgroups go, which CPUs it
takes and what `kit envs` says a host lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments import nspawn
from kitlib.measure.environments.base import Layout
from kitlib.specs.labels import parse_label

ALL_TOOLS = dict.fromkeys(("systemd-nspawn", "nsenter", "unshare", "ip"), True)
HYBRID = "10:hugetlb:/\n9:name=systemd:/\n4:memory:/box/1\n1:cpu:/\n0::/\n"


def machine(label: str = "nspawn", sut_cpus: list[int] | None = None) -> nspawn.NspawnEnvironment:
    layout = Layout(sut_cpus=[1] if sut_cpus is None else sut_cpus, client_cpus=[0])
    return nspawn.NspawnEnvironment(parse_label(label), layout, run_label="kit4242xbeef", image="kitlib/bench:x")


def test_names_carry_the_owner_for_kit_clean():
    env = machine()
    assert env.name == "kit4242xbeef-nspawn" and env.veth == "kn4242xbeef"
    assert nspawn._orphaned(env.name) is (not nspawn.pid_alive(4242))


def test_cpus_are_the_option_or_the_system_under_tests():
    assert machine().cpus == [1]
    assert machine("nspawn+cpus0-1").cpus == [0, 1]
    assert machine(sut_cpus=[]).cpus == []
    assert machine()._pin(["nproc"], None) == ["taskset", "-c", "1", "nproc"]
    assert machine()._pin(["nproc"], []) == ["nproc"]


def test_boot_mounts_the_overlay_then_becomes_nspawn_without_a_shell_parsing_paths():
    argv = nspawn.boot_argv("lowerdir=/a b,upperdir=/u,workdir=/w", "/r x", ["--boot"])
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"]
    assert argv[argv.index("-c") + 1] == nspawn.MOUNT_THEN_BOOT
    assert argv[-5:] == ["lowerdir=/a b,upperdir=/u,workdir=/w", "/r x", "systemd-nspawn", "--directory=/r x", "--boot"]


def test_commands_enter_the_init_namespaces_with_the_image_environment_only():
    argv = nspawn.enter_argv(123, ["PATH=/usr/bin", "A=b c"])
    assert argv == ["nsenter", "--target=123", "--all", "--root", "--wd", "env", "-i", "PATH=/usr/bin", "A=b c"]


def test_nspawn_options_pin_bind_and_join_the_namespace(tmp_path):
    env = machine("nspawn+cpus0")
    env.local_dir, env.netns = tmp_path, env.name
    options = env._nspawn_options()
    assert "--register=no" in options and "--keep-unit" in options and "--boot" in options
    assert "--cpu-affinity=0" in options and f"--machine={env.name}" in options
    assert f"--network-namespace-path=/run/netns/{env.name}" in options
    assert f"--bind={tmp_path / 'shared'}:{nspawn.SHARED_DIR}" in options
    unpinned = machine(sut_cpus=[])
    unpinned.local_dir, unpinned.netns = tmp_path, unpinned.name
    assert not any(option.startswith("--cpu-affinity") for option in unpinned._nspawn_options())


def test_an_overlay_folder_with_a_separator_is_refused(tmp_path):
    env = machine()
    env.tree = type("Tree", (), {"rootfs": Path("/cache/a,b")})()
    env.local_dir = tmp_path
    with pytest.raises(EnvironmentUnavailable, match="cannot take a folder"):
        env._overlay_options()


def test_cgroups_go_beside_this_process_in_the_named_and_the_v2_hierarchy(tmp_path):
    (tmp_path / "systemd").mkdir()
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.procs").write_text("")
    found = nspawn.cgroup_dirs(HYBRID.replace("name=systemd:/", "name=systemd:/outer"), "m", tmp_path)
    assert found == [tmp_path / "systemd" / "outer" / "m", tmp_path / "unified" / "m"]
    (tmp_path / "cgroup.controllers").write_text("cpu")
    (tmp_path / "cgroup.procs").write_text("")
    assert nspawn.cgroup_dirs("0::/a\n", "m", tmp_path) == [tmp_path / "a" / "m"]
    assert nspawn.cgroup_dirs("0::/a\n", "m", tmp_path / "none") == []


def test_cgroups_are_removed_deepest_first(tmp_path):
    group = tmp_path / "kit1x0000-nspawn"
    (group / "payload" / "init.scope").mkdir(parents=True)
    (group / "supervisor").mkdir()
    nspawn.remove_cgroups([group, tmp_path / "gone"])
    assert not group.exists()


@pytest.mark.parametrize(
    ("facts", "says"),
    [
        ({"tools": {**ALL_TOOLS, "systemd-nspawn": False}}, "apt-get install systemd-container"),
        ({"tools": {**ALL_TOOLS, "nsenter": False}}, "apt-get install util-linux"),
        ({"tools": {**ALL_TOOLS, "ip": False}}, "apt-get install iproute2"),
        ({"root": False}, "needs root"),
        ({"overlay": False}, "modprobe overlay"),
        ({"docker_reason": "no engine"}, "unpacked from the benchmark image: no engine"),
    ],
)
def test_each_missing_requirement_says_what_to_install_or_change(facts, says):
    given = {"root": True, "tools": ALL_TOOLS, "overlay": True, "docker_reason": None, **facts}
    ok, reason = nspawn.requirements(**given)
    assert not ok and says in reason


def test_a_host_with_everything_is_ready():
    ok, reason = nspawn.requirements(root=True, tools=ALL_TOOLS, overlay=True, docker_reason=None)
    assert ok and "systemd-nspawn" in reason and "peer namespace" in reason
