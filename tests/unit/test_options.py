"""A label's options mean what they say: zeros, values outside Docker's and the kernel's limits or beyond
this host, repeated options and a second spelling of one environment are refused through `kit run`
with one message naming label, option and what is allowed, before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import kitlib
from kitlib.core.errors import PlanError
from kitlib.specs import option_values
from kitlib.specs.labels import parse_label

DOCKER = "docker-host-volume"


def dry_run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """`kit run … --dry-run` as a user types it, with results going to tmp_path."""
    env = {**os.environ, "KIT_RESULTS": str(tmp_path / "results"), "KIT_FIGURES": str(tmp_path / "figures")}
    return subprocess.run(
        [sys.executable, "-m", "kitlib.cli", "run", *args, "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def refused(tmp_path, label: str, *messages: str, experiment: str = "latency") -> str:
    """Run the plan through the CLI: exit 2, one `kit:` message holding `messages`, no traceback, nothing written."""
    done = dry_run(tmp_path, experiment, "--env", label)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("kit: ") and done.stderr.count("kit: ") == 1, done.stderr
    for message in (label, *messages):
        assert message in done.stderr, done.stderr
    assert not (tmp_path / "results").exists()
    return done.stderr


@pytest.mark.parametrize(
    ("label", "messages"),
    [
        (f"{DOCKER}+quota0", ["quota0", "at least 1000 µs", "Docker takes 0 as no quota"]),
        (f"{DOCKER}+quota999", ["quota999", "at least 1000 µs"]),
        (f"{DOCKER}+shares0", ["shares0", "2 to 262144"]),
        (f"{DOCKER}+shares1", ["shares1", "2 to 262144"]),
        (f"{DOCKER}+shares262145", ["shares262145", "2 to 262144"]),
        (f"{DOCKER}+period0", ["period0", "1000 to 1000000 µs"]),
        (f"{DOCKER}+period1000001", ["period1000001", "1000 to 1000000 µs"]),
        (f"{DOCKER}+mem0k", ["mem0k", "at least 6m", "0 means no limit"]),
        (f"{DOCKER}+mem6143k", ["mem6143k", "at least 6m"]),
        (f"{DOCKER}+cpus3-1", ["cpus3-1", "runs backwards"]),
        (f"{DOCKER}+cpus0-99999999999", ["cpus0-99999999999", "below 8192"]),
        (f"{DOCKER}+numa1024", ["numa1024", "below 1024"]),
    ],
)
def test_zero_and_out_of_range_values_are_refused(tmp_path, label, messages):
    refused(tmp_path, label, "out of range", *messages)


def test_a_repeated_option_is_refused_not_overridden(tmp_path):
    refused(tmp_path, f"{DOCKER}+quota5000+quota6000", "'quota' is given twice", "quota5000, quota6000")
    refused(tmp_path, "native+replica+replica", "'replica' is given twice")


@pytest.mark.parametrize(
    ("label", "canonical"),
    [
        (f"{DOCKER}+quota05000", f"{DOCKER}+quota5000"),
        (f"{DOCKER}+period010000+quota5000", f"{DOCKER}+period10000+quota5000"),
        (f"{DOCKER}+quota5000+period10000", f"{DOCKER}+period10000+quota5000"),
        (f"{DOCKER}+mem1024m", f"{DOCKER}+mem1g"),
        (f"{DOCKER}+mem6144k", f"{DOCKER}+mem6m"),
        (f"{DOCKER}+cpus1,0", f"{DOCKER}+cpus0-1"),
        (f"{DOCKER}+cpus0,0", f"{DOCKER}+cpus0"),
        (f"{DOCKER}+replica+quota5000", f"{DOCKER}+quota5000+replica"),
    ],
)
def test_a_second_spelling_is_refused_naming_the_one_label(tmp_path, label, canonical):
    refused(tmp_path, label, "one environment has one label", f"write '{canonical}'")
    assert parse_label(canonical).label == canonical


def test_the_limits_themselves_are_accepted():
    spec = parse_label(f"{DOCKER}+cpus0+mem6m+numa0+period1000+quota1000+shares2+replica")
    assert spec.options == {
        "cpus": "0",
        "mem": "6m",
        "numa": 0,
        "period": 1000,
        "quota": 1000,
        "shares": 2,
        "replica": True,
    }
    assert parse_label(f"{DOCKER}+period1000000+shares262144").options == {"period": 1_000_000, "shares": 262_144}
    assert parse_label("kvm+mem2g+numa0+qcow2").storage == "qcow2"


def test_a_label_longer_than_any_spelling_needs_is_refused_without_echoing_it(tmp_path):
    label = f"{DOCKER}+numa" + "9" * 5000
    done = dry_run(tmp_path, "latency", "--env", label)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "5023 characters; a label has at most 200" in done.stderr and len(done.stderr) < 300


def test_options_beyond_this_host_are_refused(tmp_path):
    online = option_values.online_cpus()
    absent = max(online) + 1
    refused(tmp_path, f"{DOCKER}+cpus{absent}", f"cpus{absent}", f"CPU(s) {absent} are not online here")
    refused(tmp_path, f"{DOCKER}+numa99", "numa99", "no NUMA node 99")
    gib = option_values.host_memory_bytes() // 2**30 + 1
    refused(tmp_path, f"{DOCKER}+mem{gib}g", f"mem{gib}g", "more than this host's")
    most = 10_000 * len(online)
    stderr = refused(tmp_path, f"{DOCKER}+period10000+quota{most + 1}", f"quota{most + 1}", "never throttles")
    assert f"at most {most - 1}" in stderr
    # Docker's default period (100 ms) bounds a quota given alone
    refused(tmp_path, f"{DOCKER}+quota{100_000 * len(online) + 1}", "never throttles")


def test_a_quota_of_every_cpus_whole_period_is_refused_as_it_never_throttles(tmp_path):
    """A quota equal to period × CPUs gives each CPU all its time: `≥`, not `>`."""
    online = option_values.online_cpus()
    whole = 100_000 * len(online)
    refused(tmp_path, f"{DOCKER}+quota{whole}", f"quota{whole}", "never throttles", f"at most {whole - 1}")
    refused(tmp_path, f"{DOCKER}+period1000+quota{1000 * len(online)}", "never throttles")
    assert kitlib.plan("latency", environments=[f"{DOCKER}+quota{whole - 1}"])


def test_a_quota_is_held_to_the_labels_own_cpus_not_the_hosts(tmp_path):
    """cpus0 is one CPU: 150 ms per 100 ms period never binds there, whatever the host has."""
    stderr = refused(tmp_path, f"{DOCKER}+cpus0+quota150000", "quota150000", "1 CPU(s) (the label's cpus0)")
    assert "never throttles; at most 99999" in stderr
    assert kitlib.plan("latency", environments=[f"{DOCKER}+cpus0+quota50000"])


def test_options_within_this_host_pass_the_plan():
    online = option_values.online_cpus()
    label = f"{DOCKER}+cpus{option_values.cpu_list(online)}+period10000+quota{10_000 * len(online) - 1}"
    assert kitlib.plan("latency", environments=[label]).environments == (label,)


def test_a_remote_system_under_test_is_not_held_to_this_hosts_cpus():
    label = f"{DOCKER}+cpus{max(option_values.online_cpus()) + 1}"
    with pytest.raises(PlanError, match="not online here"):
        kitlib.plan("redis", environments=[label])
    plan = kitlib.plan("redis", environments=[label], sut_host="root@192.0.2.1:22")
    assert plan.environments == (label,)
    with pytest.raises(PlanError, match="out of range"):  # Docker's own limits hold there too
        kitlib.plan("redis", environments=[f"{DOCKER}+quota0"], sut_host="root@192.0.2.1:22")


def test_cpu_lists_are_written_as_the_kernel_writes_them():
    assert option_values.cpu_set("8,0-3,2") == [0, 1, 2, 3, 8]
    assert option_values.cpu_list([8, 0, 1, 2, 3, 3]) == "0-3,8"
    assert option_values.cpu_list([0, 2, 3, 5]) == "0,2-3,5"
    assert option_values.cpu_list(option_values.cpu_set("4-4")) == "4"


def test_memory_is_written_in_its_largest_whole_unit():
    assert [option_values.memory_text(option_values.memory_bytes(t)) for t in ("1024m", "1536m", "6144k", "2g")] == [
        "1g",
        "1536m",
        "6m",
        "2g",
    ]


def test_a_quota_is_held_to_a_numa_nodes_cpus():
    node = option_values.numa.nodes()[0]
    own = option_values.cpu_set(option_values.numa.cpulist(node))
    reasons = option_values.beyond_host({"numa": node, "quota": 100_000 * len(own)})
    assert reasons and f"NUMA node {node}'s {option_values.cpu_list(own)}" in reasons[0]
    assert option_values.beyond_host({"numa": node, "quota": 100_000 * len(own) - 1}) == []


def test_a_remote_host_s_shape_reads_from_what_its_kernel_prints_and_holds_its_options():
    """SHAPE_SCRIPT's real output (run here, as sshd would run it there) gives the machine's CPUs, nodes and
    memory; a remote plan's labels are held to that shape, and output cut short is refused."""
    import subprocess

    from kitlib.core.errors import EnvironmentUnavailable
    from kitlib.measure.run import remote_options

    output = subprocess.run(["sh", "-c", remote_options.SHAPE_SCRIPT], capture_output=True, text=True).stdout
    shape = remote_options.read_shape(output, "the system under test me@sut")
    assert shape.online == option_values.online_cpus() and shape.memory_bytes > 0
    plan = kitlib.plan(
        "redis", environments=["native", "docker-host-volume+cpus0-99"], sut_host="me@10.0.0.2:22", repetitions=1
    )
    with pytest.raises(PlanError, match=r"cpus0-99: CPU\(s\) .* are not online on the system under test me@sut"):
        remote_options.refuse_beyond_remote(plan, shape)
    with pytest.raises(EnvironmentUnavailable, match="could not be read"):
        remote_options.read_shape(output.split("kit-section")[0], "the system under test me@sut")
