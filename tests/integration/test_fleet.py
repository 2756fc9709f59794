"""`kit fleet run` over SSH on two namespace hosts, each a machine of its own (address, sshd, hostname,
machine-id) running the kit on itself: both runs come back as bundles `kit verify` accepts, from two
hosts; with one host stopped mid-run, the other completes and the lost one is named, its run stopped."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kitlib.results import bundles

from ..conftest import missing, start_kit, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.netns]

KIT = str(Path(sys.executable).with_name("kit"))
#: a small Redis plan sized in seconds, so that a point is in flight a while on any machine
OPTIONS = ["--env", "native", "--peer", "loopback", "--repetitions", "3", "-p", "clients", "[1, 4]"]


@pytest.fixture
def two_hosts(root_netns, tmp_path, request):
    """Two sshd-only namespace hosts letting in one key, and a fleet file naming both; the first one
    reaches the network beyond this machine where the test asks for it (`{"internet": True}`)."""
    from kitlib.core.errors import EnvironmentUnavailable

    from ..support.namespace_host import NamespaceHost

    first = NamespaceHost(docker=False, **getattr(request, "param", {}))
    hosts = [first]
    try:
        first.start()
        second = NamespaceHost(docker=False, authorize=(first.key + ".pub",))
        hosts.append(second)
        second.start()
    except EnvironmentUnavailable as exc:
        for host in hosts:
            host.stop()
        missing("netns", f"no namespace host: {exc}")
    results = f"/tmp/kit-fleet-test-{secrets.token_hex(3)}"
    known = tmp_path / "known_hosts"
    known.write_text("".join(Path(h.known_hosts).read_text() for h in hosts))
    text = f'backend = "ssh"\n[ssh]\nkey = "{first.key}"\nknown_hosts = "{known}"\n'
    for name, host in zip(("lab-a", "lab-b"), hosts, strict=True):
        text += f'\n[[hosts]]\nname = "{name}"\nhost = "{host.address}"\nkit = "{KIT}"\nresults = "{results}/{name}"\n'
    fleet_file = tmp_path / "fleet.toml"
    fleet_file.write_text(text)
    try:
        yield fleet_file, hosts, Path(results)
    finally:
        for host in hosts:
            host.stop()
        shutil.rmtree(results, ignore_errors=True)
    for host in hosts:
        assert host.leftovers() == [], host.leftovers()


def kit_processes_in(folder: Path) -> list[str]:
    """Processes whose environment says they store their runs under `folder` (a host's kit run)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"KIT_RESULTS={folder}".encode() in environ.read_bytes().split(b"\0"):
                found.append(environ.parent.name)
        except OSError:  # gone, or not ours to read
            continue
    return found


def test_a_fleet_run_brings_back_a_verified_bundle_from_each_host(two_hosts, tmp_path):
    fleet_file, hosts, results = two_hosts
    output = tmp_path / "bundles"
    proc = start_kit(
        ["fleet", "run", str(fleet_file), "redis", "-o", str(output), "--", *OPTIONS, "-p", "seconds", "1"]
    )
    said, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, said[-3000:]
    assert "2 of 2 host(s) done" in said, said[-3000:]
    record = json.loads((output / "fleet.json").read_text())
    assert [h["status"] for h in record["hosts"]] == ["done", "done"]
    machines = set()
    for name in ("lab-a", "lab-b"):
        found = bundles.verify(output / f"{name}.tar.gz")
        assert [e for e, _ in found.runs] == ["redis"]
        with bundles.opened(output / f"{name}.tar.gz") as folder:
            records = pd.concat(pd.read_csv(f) for f in folder.glob("*/*/records.csv"))
        assert set(records["env"]) == {"native"} and len(records) > 0
        machines |= set(records["host"])
    assert len(machines) == 2, "each bundle names the machine that measured it"
    pooled = subprocess.run(
        [KIT, "claims", "--pool", str(output / "lab-a.tar.gz"), str(output / "lab-b.tar.gz")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pooled.returncode == 0, pooled.stderr[-2000:]
    assert [kit_processes_in(results / n / record["label"]) for n in ("lab-a", "lab-b")] == [[], []]


@pytest.mark.extended  # a fleet's bundles: the fleet run of two hosts
def test_a_host_lost_mid_run_is_named_and_the_other_completes(two_hosts, tmp_path):
    fleet_file, hosts, results = two_hosts
    output = tmp_path / "bundles"
    proc = start_kit(
        ["fleet", "run", str(fleet_file), "redis", "-o", str(output), "--", *OPTIONS, "-p", "seconds", "3"]
    )
    # the second host has measured a point: its run is under way; then the machine goes away
    wait_for(lambda: any(results.glob("lab-b/*/redis/*/units/*.json")), 300, proc, "a first point on lab-b")
    hosts[1].stop()
    said, _ = proc.communicate(timeout=900)
    assert proc.returncode == 1, said[-3000:]
    assert "1 of 2 host(s) done" in said, said[-3000:]
    record = json.loads((output / "fleet.json").read_text())
    outcome = {h["host"]: h for h in record["hosts"]}
    assert outcome["lab-a"]["status"] == "done" and outcome["lab-b"]["status"] == "failed"
    assert outcome["lab-b"]["reason"], "the lost host is named with a reason"
    assert "lab-b: FAILED" in said
    bundles.verify(output / "lab-a.tar.gz")
    assert not (output / "lab-b.tar.gz").exists()
    # the lost host's run saw its connection end and stopped itself
    gone = results / "lab-b" / record["label"]
    wait_for(lambda: kit_processes_in(gone) == [], 120, what="the lost host's kit to stop")


@pytest.mark.extended  # a fleet's bundles: the fleet run of two hosts
@pytest.mark.parametrize("two_hosts", [{"internet": True}], indirect=True)  # lab-a installs from PyPI
def test_fleet_install_sets_the_project_up_on_a_host_and_names_one_it_cannot_reach(two_hosts, tmp_path):
    fleet_file, hosts, results = two_hosts
    folder = Path(f"/tmp/kit-install-test-{secrets.token_hex(3)}")
    text = fleet_file.read_text()
    for name in ("lab-a", "lab-b"):
        text = text.replace(f'kit = "{KIT}"\nresults = "{results}/{name}"', f'kit = "{folder}/{name}/.venv/bin/kit"')
    (tmp_path / "install.toml").write_text(text)
    hosts[1].stop()  # a machine that is down: named, the other installed
    try:
        proc = start_kit(["fleet", "install", str(tmp_path / "install.toml"), "--only-python"])
        said, _ = proc.communicate(timeout=1200)
        assert proc.returncode == 1, said[-3000:]
        assert "1 of 2 host(s) installed" in said and "lab-b" in said.split("installed")[-1], said[-2000:]
        kit = folder / "lab-a" / ".venv" / "bin" / "kit"
        assert (folder / "lab-a" / "kitlib" / "cli.py").is_file() and not (folder / "lab-a" / ".git").exists()
        helped = subprocess.run([str(kit), "fleet", "--help"], capture_output=True, text=True, timeout=120)
        assert helped.returncode == 0 and "install" in helped.stdout
        assert not (folder / "lab-b").exists()
        print(said.strip().splitlines()[-3:])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
