"""The session collector: what one run of a plan writes into provenance.json's `sessions`."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from kitlib.measure import provenance
from kitlib.measure.host import commands
from kitlib.measure.store import RunStore

#: the keys of a session entry, in order, as readers (analysis, hostfacts, drift, replicas) find them
KEYS = ["started", "run_label", "host", "host_id", "plan", "environments", "tool_versions", "commands", "layout"]


class FakeEnv:
    def __init__(self, label: str, redis: str):
        self.label, self.redis, self.commands = label, redis, [{"where": label, "argv": ["redis-server"]}]

    def describe(self):
        return {"label": self.label}

    def run(self, argv, timeout, check):
        assert argv == provenance.DPKG_QUERY and not check
        # xz-utils differs too, as an image's Debian revision often does: not a tool of the run's experiment
        return SimpleNamespace(output=f"redis-server {self.redis} ii\nfio 3.33 un\nxz-utils 5.4.{self.redis} ii\n")

    def host_run(self, argv, timeout, check):
        return SimpleNamespace(output="machine_id=abc\nhostname=sut\ncpus=4\nvirt=none\n")


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(provenance, "collect_host", lambda: {"os": {"hostname": "here"}, "host_id": "h-1"})
    monkeypatch.setattr(provenance, "collect_tool_versions", lambda: {"redis-tools": "7.0"})
    commands.run(["true"])  # before the session: not its own
    return provenance.Session.begin("kit1x0001", {"experiment": "redis", "order": "interleaved", "seed": 7})


def test_a_session_writes_the_provenance_shape(session, tmp_path):
    session.layout = {"sut_cpus": [0], "client_cpus": [1], "ports": [6379]}
    session.add_peer(SimpleNamespace(describe=lambda: {"kind": "netns"}))
    for position, (label, redis) in enumerate([("native", "7.0"), ("docker-nat-volume", "7.2")]):
        session.add_segment(label, 2 * position, 2 * position + 1)
        env = FakeEnv(label, redis)
        session.add_environment(label, env)
        session.add_commands(env.commands)
    commands.run(["true", "during"])
    with pytest.warns(UserWarning, match="redis-server differs between environments: 7.0 .native. vs 7.2"):
        entry = session.finish()

    assert list(entry) == [*KEYS, "peer", "order", "version_mismatches", "finished"]
    assert entry["host_id"] == "h-1" and entry["run_label"] == "kit1x0001" and entry["started"] <= entry["finished"]
    assert entry["order"] == {
        "order": "interleaved",
        "seed": 7,
        "segments": [["native", 0, 1], ["docker-nat-volume", 2, 3]],
    }
    assert entry["environments"] == {"native": {"label": "native"}, "docker-nat-volume": {"label": "docker-nat-volume"}}
    assert entry["tool_versions"] == {
        "peer": {"redis-tools": "7.0"},
        "native": {"redis-server": "7.0", "xz-utils": "5.4.7.0"},
        "docker-nat-volume": {"redis-server": "7.2", "xz-utils": "5.4.7.2"},
    }
    # recorded whole, warned of and listed for the experiment's own tools only (Redis runs no xz)
    assert entry["version_mismatches"] == [
        {"package": "redis-server", "versions": {"native": "7.0", "docker-nat-volume": "7.2"}}
    ]
    on_host = [c for c in entry["commands"] if c["where"] == "host"]
    assert [c["argv"] for c in on_host] == [["true", "during"]], "the host's commands since the session began"
    assert [c["where"] for c in entry["commands"]] == ["native", "docker-nat-volume", "host"]
    assert commands.drain() == []

    store = RunStore(tmp_path)
    store.append_provenance(entry)
    store.append_provenance(entry)
    written = json.loads((tmp_path / "provenance.json").read_text())
    assert [list(s) for s in written["sessions"]] == [list(entry)] * 2


def test_a_remote_system_under_test_is_recorded_and_a_peer_that_never_started_is_left_out(session):
    session.layout = {"sut_cpus": [], "client_cpus": [0, 1], "ports": [6379]}
    facts = session.add_sut_host("root@sut", FakeEnv("native", "7.0"))
    assert facts["host_id"] and facts["os"]["hostname"] == "sut" and facts["host_id"] != session.host_id
    session.add_environment("native", FakeEnv("native", "7.0"))
    entry = session.finish()
    assert list(entry) == [*KEYS, "sut_hosts", "version_mismatches", "finished"]
    assert entry["sut_hosts"] == {"root@sut": facts} and entry["version_mismatches"] == []
    assert entry["commands"] == []
