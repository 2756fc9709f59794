"""Podman labels without Podman: what each label asks of the API, what a host lacks for it, and the
small parsers the environment relies on (versions, limits, subordinate ids, helper ownership)."""

from __future__ import annotations

import os

import pytest

from kitlib.measure.environments import podman
from kitlib.measure.host import podman_service as ps
from kitlib.specs.labels import parse_label

ALL_TOOLS = dict.fromkeys(("podman", "catatonit", "setpriv", "newuidmap", "slirp4netns", "pasta"), True)


def verdict(label: str, **changes) -> tuple[bool, str]:
    facts = {"version": (4, 3, 1), "root": True, "tools": dict(ALL_TOOLS), "docker_reason": None, "tun": True}
    tools = changes.pop("tools", {})
    facts.update(changes)
    facts["tools"].update(tools)
    return podman.requirements(parse_label(label), **facts)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("podman version 4.3.1", (4, 3, 1)), ("podman version 5.0", (5, 0, 0)), ("4.4.0-rc1", (4, 4, 0)), ("", None)],
)
def test_version_is_read_from_podmans_words(text, expected):
    assert ps.parse_version(text) == expected


@pytest.mark.parametrize(("version", "runs"), [((4, 3, 1), False), ((4, 4, 0), True), ((5, 1), True), (None, False)])
def test_pasta_needs_podman_4_4(version, runs):
    assert podman.pasta_supported(version) is runs


def test_pasta_on_podman_4_3_is_refused_with_the_version_it_needs():
    assert verdict("podman-rootless-nat-volume+pasta") == (False, "podman 4.3.1 predates pasta (4.4)")
    ok, reason = verdict("podman-rootless-nat-volume+pasta", version=(4, 9, 3))
    assert ok and "pasta" in reason
    assert verdict("podman-rootless-nat-volume+pasta", version=(4, 9, 3), tools={"pasta": False}) == (
        False,
        "pasta is missing (apt-get install passt)",
    )


@pytest.mark.parametrize(
    ("label", "changes", "says"),
    [
        ("podman-host-volume", {"tools": {"podman": False}}, "apt-get install podman"),
        ("podman-host-volume", {"version": None}, "apt-get install podman"),
        ("podman-host-volume", {"tools": {"catatonit": False}}, "apt-get install catatonit"),
        ("podman-nat-volume", {"root": False}, "needs root"),
        ("podman-host-volume", {"docker_reason": "no Docker engine answers"}, "comes from Docker"),
        ("podman-rootless-host-volume", {"tools": {"newuidmap": False}}, "apt-get install uidmap"),
        ("podman-rootless-host-volume", {"tools": {"setpriv": False}}, "util-linux"),
        ("podman-rootless-nat-volume+slirp4netns", {"tools": {"slirp4netns": False}}, "apt-get install slirp4netns"),
        ("podman-rootless-nat-overlay+slirp4netns", {"tun": False}, "modprobe tun"),
    ],
)
def test_each_missing_piece_says_what_to_install_or_change(label, changes, says):
    ok, reason = verdict(label, **changes)
    assert not ok and says in reason, reason


def test_available_labels_say_how_they_run():
    assert verdict("podman-nat-volume") == (
        True,
        "podman 4.3.1 (rootful); client in a peer namespace reaches it through DNAT",
    )
    assert verdict("podman-rootless-host-volume") == (True, "podman 4.3.1 rootless as user kitbench")
    # a rootful label needs none of the rootless tools
    assert verdict("podman-host-overlay", tools={"newuidmap": False, "slirp4netns": False})[0]


@pytest.mark.parametrize(
    ("label", "mode"),
    [
        ("podman-host-volume", "host"),
        ("podman-nat-overlay", "bridge"),
        ("podman-rootless-host-volume", "host"),
        ("podman-rootless-nat-volume+slirp4netns", "slirp4netns:port_handler=slirp4netns"),
        ("podman-rootless-nat-volume+pasta", "pasta"),
    ],
)
def test_network_mode_by_label(label, mode):
    assert podman.network_mode(parse_label(label)) == mode


def test_container_arguments_mark_the_run_cap_the_limits_and_publish_on_nat():
    labels = {"org.kitlib.run": "kit12x0abc"}
    kwargs = podman.container_kwargs(
        parse_label("podman-nat-volume+cpus1"),
        name="kit12x0abc-podman-nat-volume",
        labels=labels,
        owner=12,
        limits={"nofile": 20000, "nproc": 32768},
        cgroup={"cpuset_cpus": "1"},
    )
    assert kwargs["environment"] == {"KITLIB_OWNER": "12"}
    assert "network_mode" not in kwargs and kwargs["ports"] == {}
    assert kwargs["cpuset_cpus"] == "1" and kwargs["init"] is True
    assert {(u["Name"], u["Soft"], u["Hard"]) for u in kwargs["ulimits"]} == {
        ("nofile", 20000, 20000),
        ("nproc", 32768, 32768),
    }
    host = podman.container_kwargs(
        parse_label("podman-rootless-host-volume"), name=None, labels=labels, owner=12, limits={}, cgroup={}
    )
    assert host["network_mode"] == "host" and "ports" not in host and host["ulimits"] == []


def test_ports_are_published_for_tcp_and_udp_and_the_forward_rule_names_the_run():
    assert podman.published_ports({7000: 7000, 7001: 41000}) == {
        "7000/tcp": 7000,
        "7000/udp": 7000,
        "7001/tcp": 41000,
        "7001/udp": 41000,
    }
    rule = podman.forward_rule("10.88.0.5", "kit12x0abc")
    assert rule[:2] == ["-d", "10.88.0.5/32"] and "kitlib:kit12x0abc" in rule and rule[-2:] == ["-j", "ACCEPT"]


@pytest.mark.parametrize(
    ("label", "sut", "expected"),
    [
        ("podman-rootless-host-volume", [1], [1]),
        ("podman-rootless-host-volume+cpus0-1", [1], [0, 1]),
        ("podman-rootless-nat-volume+cpus0+slirp4netns", [1], [0]),
    ],
)
def test_rootless_commands_are_pinned_to_the_labels_cpus(label, sut, expected):
    assert podman.pinned_cpus(parse_label(label), sut) == expected


def test_subordinate_ids_go_above_every_range_given():
    text = "alice:100000:65536\nbob:165536:65536\n# comment\n"
    assert ps.free_subid_start(text) == 231072
    assert ps.free_subid_start("") == ps.SUBID_FLOOR
    assert ps.has_subids(text, "bob", 1001)
    assert ps.has_subids("1001:300000:65536", "kitbench", 1001)
    assert not ps.has_subids("kitbench:300000:1000", "kitbench", 1001)


def _acl(path) -> list[tuple[int, int, int]]:
    return ps.parse_acl(os.getxattr(path, ps.ACL_XATTR))


def test_the_tun_acl_adds_that_user_and_keeps_every_entry_there(tmp_path):
    """On a real file: the group's access and another user's entry stay; the mask covers the new one."""
    device = tmp_path / "tun"
    device.touch()
    os.chmod(device, 0o640)
    ps.grant_tun(1001, str(device))  # no ACL yet: the one the mode means, with the user added
    assert _acl(device) == [
        (1, 6, ps.ACL_UNDEFINED_ID),
        (2, 6, 1001),
        (4, 4, ps.ACL_UNDEFINED_ID),
        (0x10, 6, ps.ACL_UNDEFINED_ID),
        (0x20, 0, ps.ACL_UNDEFINED_ID),
    ]
    ps.grant_tun(1002, str(device))
    entries = _acl(device)
    assert (2, 6, 1001) in entries and (2, 6, 1002) in entries, "the first user's entry is kept"
    assert (4, 4, ps.ACL_UNDEFINED_ID) in entries, "the group keeps its read access"
    assert [(t, q) for t, _, q in entries] == sorted((t, q) for t, _, q in entries), "the kernel's order"
    before = os.getxattr(device, ps.ACL_XATTR)
    ps.grant_tun(1002, str(device))
    assert os.getxattr(device, ps.ACL_XATTR) == before, "a user granted already is left as is"


def test_limits_are_read_from_proc():
    text = (
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max processes             32768                32768                processes \n"
        "Max open files            1024                 20000                files     \n"
        "Max locked memory         unlimited            unlimited            bytes     \n"
    )
    assert ps.parse_limits(text) == {"nproc": 32768, "nofile": 20000}
    assert ps.parse_limits("Max processes unlimited unlimited processes") == {}


def test_a_helper_process_is_owned_by_the_run_its_names_carry():
    conmon = ["/usr/bin/conmon", "--api-version", "1", "-c", "abc", "-n", "kit4242x0a1b-podman-nat-volume"]
    assert ps.owner_of_process(conmon, b"") == 4242
    service = ["podman", "system", "service", "--time=0", "unix:///run/kit-podman/kit77x00ff-1a2b3c.sock"]
    assert ps.owner_of_process(service, b"") == 77
    assert ps.owner_of_process(["slirp4netns", "--mtu=65520"], b"A=1\0KITLIB_OWNER=99\0") == 99
    assert ps.owner_of_process(["slirp4netns"], b"A=1\0") is None


def test_rootless_commands_run_as_the_user_with_its_own_environment_only():
    identity = ps.Identity(True, 1001, 1001, "/home/kitbench", "/run/kit-podman-1001")
    argv = ps.as_identity(identity, ["podman", "ps"])
    assert argv[:4] == ["setpriv", "--reuid=1001", "--regid=1001", "--init-groups"]
    assert argv[4:6] == ["env", "-i"] and argv[-2:] == ["podman", "ps"]
    assert "XDG_RUNTIME_DIR=/run/kit-podman-1001" in argv and any(a.startswith("KITLIB_OWNER=") for a in argv)
    assert ps.as_identity(ps.ROOT, ["podman", "ps"]) == ["podman", "ps"]
    socket = ps.socket_path(identity, "kit12x0abc")
    assert socket.startswith("/run/kit-podman-1001/kit12x0abc-") and len(socket) < 100
