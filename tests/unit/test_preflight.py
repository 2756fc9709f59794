"""`kit check` items on files captured on a 2-CPU VM guest inside a container (tests/data/proc), laid
out as the kernel lays them out under a root folder."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kitlib.core.errors import ParseError
from kitlib.measure.run import preflight

from ..support.busy_loop import orphan_busy_loop

DATA = Path(__file__).parents[1] / "data" / "proc"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """This guest's files where the kernel has them (it exposes no cpufreq and no SMT)."""
    (tmp_path / "proc").mkdir()
    for name in ("cpuinfo", "meminfo"):
        shutil.copy(DATA / name, tmp_path / "proc" / name)
    cpu = tmp_path / "sys/devices/system/cpu"
    (cpu / "smt").mkdir(parents=True)
    shutil.copy(DATA / "smt-control", cpu / "smt" / "control")
    (cpu / "cpu1" / "topology").mkdir(parents=True)
    shutil.copy(DATA / "cpu1-thread_siblings_list", cpu / "cpu1" / "topology" / "thread_siblings_list")
    (tmp_path / ".dockerenv").touch()
    return tmp_path


def test_a_vm_guest_in_a_container_without_cpufreq(root: Path):
    items = {
        i.name: i
        for i in [
            preflight.governor(root, [0, 1]),
            preflight.boost(root),
            preflight.smt_siblings(root, [1]),
            preflight.memory(root),
            preflight.vm_guest(root),
            preflight.container(root),
        ]
    }
    assert items["CPU governor"].status == "info" and "no cpufreq" in items["CPU governor"].state
    assert items["CPU boost"].status == "info"
    assert items["SMT siblings"].status == "ok" and "SMT notsupported" in items["SMT siblings"].state
    assert items["free memory"].status == "ok" and "GiB available of 23.5 GiB" in items["free memory"].state
    assert items["VM guest"].status == "info" and items["VM guest"].state.startswith("yes")
    assert items["container"].status == "info" and ".dockerenv" in items["container"].state
    text = preflight.render(list(items.values()))
    assert text.splitlines()[-1] == "nothing to change"


def test_what_to_change_where_the_kernel_reports_it(root: Path):
    cpu = root / "sys/devices/system/cpu"
    for n, governor in ((0, "performance"), (1, "powersave")):
        (cpu / f"cpu{n}" / "cpufreq").mkdir(parents=True)
        (cpu / f"cpu{n}" / "cpufreq" / "scaling_governor").write_text(f"{governor}\n")
    (cpu / "cpufreq").mkdir()
    (cpu / "cpufreq" / "boost").write_text("1\n")
    (cpu / "cpu1" / "topology" / "thread_siblings_list").write_text("1,3\n")
    governor, boost, smt = preflight.governor(root, [0, 1]), preflight.boost(root), preflight.smt_siblings(root, [1])
    assert governor.status == "warn" and "cpu1 powersave" in governor.state and "performance" in governor.change
    assert boost.status == "warn" and "cpufreq/boost" in boost.change
    assert smt.status == "warn" and "cpu1 shares its core with cpu3" in smt.state and "smt/control" in smt.change
    assert preflight.render([governor, boost, smt]).splitlines()[-1] == "3 item(s) to change"


def test_low_memory_and_a_cut_meminfo(root: Path):
    meminfo = root / "proc" / "meminfo"
    lines = meminfo.read_text().splitlines()
    meminfo.write_text(
        "\n".join(x if not x.startswith("MemAvailable") else "MemAvailable:     1048576 kB" for x in lines)
    )
    assert preflight.memory(root).status == "warn"
    meminfo.write_text(lines[0] + "\n")
    with pytest.raises(ParseError, match="MemAvailable"):
        preflight.memory(root)


def test_the_load_items_sample_this_host():
    items = preflight.load(0.3)
    assert [i.name for i in items] == ["steal", "background load"]
    assert "% of the host's CPU capacity" in items[1].state
    # another tenant's busy loop: a warning naming it
    with orphan_busy_loop():
        busy = preflight.load(1.0)[1]
    assert busy.status == preflight.WARN and "busiest: sh (pid" in busy.state, busy.state


def test_kit_check_prints_every_item_and_a_bad_rule_is_one_message():
    def kit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kitlib.cli", *args], capture_output=True, text=True, timeout=120)

    done = kit("check", "--seconds", "0.3")
    assert done.returncode == 0, done.stderr
    names = ["CPU governor", "CPU boost", "SMT siblings", "steal", "background load", "free memory", "VM guest"]
    for name in [*names, "container"]:
        assert any(line.startswith(name) for line in done.stdout.splitlines()), done.stdout
    bad = kit("run", "net", "--env", "native", "--dry-run", "--interference", '{"max_steal_pct": -1}')
    assert bad.returncode == 2 and "max_steal_pct" in bad.stderr and "Traceback" not in bad.stderr
    not_json = kit("run", "net", "--env", "native", "--dry-run", "--interference", "steal=1")
    assert not_json.returncode == 2 and "--interference" in not_json.stderr


def test_the_check_says_what_the_host_id_is_made_of():
    """The sample's host (no instance identity), this machine (the kit's id, no DMI) and a machine with
    a DMI product UUID: each line names the id and its parts."""
    import json

    from kitlib.core import hostid
    from kitlib.core.paths import PROJECT_ROOT
    from kitlib.measure import provenance

    sample = json.loads((PROJECT_ROOT / "data/sample/cpu/quick-82ebf9c989/provenance.json").read_text())
    old = preflight.host_identity(sample["sessions"][-1]["host"])
    assert old.status == preflight.WARN and old.state.startswith("21300648cfda from machine-id 3d1219c7…")
    assert "24064 MiB; no instance identity" in old.state and "cloned" in old.change
    here = provenance.collect_identity()
    item = preflight.host_identity(here)
    assert item.state.startswith(f"{provenance.this_host_id()} from ") and "the kit's instance id" in item.state
    assert f"{hostid.identity(here)['memory_gib']} GiB" in item.state
    dmi = {**here, "instance": {**here["instance"], "product_uuid": "4c4c4544-0000-1000-8000-b2c04f4e3232"}}
    assert preflight.host_identity(dmi).status == preflight.OK
    assert "DMI product UUID 4c4c4544-0000-1000-8000-b2c04f4e3232" in preflight.host_identity(dmi).state
