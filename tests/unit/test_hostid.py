"""Host identity from provenance facts: stable, and honest about what the host is."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import kitlib
from kitlib.core import hostid
from kitlib.core.errors import KitError
from kitlib.core.paths import PROJECT_ROOT
from kitlib.measure import provenance
from kitlib.measure.planning import Plan
from kitlib.measure.store import RunStore
from kitlib.results import load_records


def test_the_id_is_stable_and_prefers_the_machine_id():
    host = provenance.collect_host()
    assert hostid.host_id(host) == hostid.host_id(provenance.collect_host())
    other = {**host, "os": {**host["os"], "machine_id": "0" * 32}}
    assert hostid.host_id(other) != hostid.host_id({**host, "os": {**host["os"], "machine_id": "1" * 32}})


def test_a_vm_guest_is_told_apart_from_a_container_and_bare_metal():
    bare = {"cpu": {"virtualization_flags": ["vmx"]}, "virtualization": "none"}
    assert not hostid.is_virtual_machine(bare)
    assert not hostid.is_virtual_machine({**bare, "virtualization": "docker"})
    assert hostid.is_virtual_machine({**bare, "virtualization": "kvm"})
    assert hostid.is_virtual_machine({"cpu": {"virtualization_flags": ["hypervisor"]}, "virtualization": "docker"})
    assert "a VM guest" in hostid.describe_host({"cpu": {"virtualization_flags": ["hypervisor"]}, "os": {}})


#: two machines cloned from one image: one machine-id, other hardware (the case of data/sample's Xeon run)
EPYC = {
    "cpu": {"model": "AMD EPYC", "logical_cpus": 2, "caches": {"L2": "1024K", "L3": "32768K"}},
    "memory": {"MemTotal": "24684084 kB"},
    "os": {"machine_id": "3d1219c7c4c5404aaa1f6d2a48adfda4", "hostname": "vm"},
}


def _with(host: dict, part: str, **facts) -> dict:
    return {**host, part: {**host[part], **facts}}


@pytest.mark.parametrize(
    "clone",
    [
        _with(EPYC, "cpu", model="Intel(R) Xeon(R) Processor"),
        _with(EPYC, "cpu", logical_cpus=4),
        _with(EPYC, "cpu", caches={"L2": "1024K", "L3": "266240K"}),
        _with(EPYC, "memory", MemTotal="32873000 kB"),
    ],
)
def test_clones_of_one_image_never_share_a_host_id(clone):
    assert hostid.host_id(clone) != hostid.host_id(EPYC)
    assert hostid.legacy_host_id(clone) == hostid.legacy_host_id(EPYC), "the old id took them for one machine"
    assert hostid.differences(EPYC, clone), "and the difference is named"


def test_the_kernels_reservations_do_not_make_another_machine():
    assert hostid.host_id(_with(EPYC, "memory", MemTotal="24683656 kB")) == hostid.host_id(EPYC)
    assert hostid.differences(EPYC, _with(EPYC, "os", hostname="renamed")) == []


def test_caches_are_read_from_sysfs_and_from_a_remote_listing(tmp_path):
    for index, (level, kind, size) in enumerate(
        [("1", "Data", "32K"), ("1", "Instruction", "32K"), ("3", "Unified", "32768K")]
    ):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (folder / name).write_text(text + "\n")
    expected = {"L1d": "32K", "L1i": "32K", "L3": "32768K"}
    assert provenance.collect_caches(tmp_path) == expected
    assert provenance.parse_caches("1:Data:32K 1:Instruction:32K 3:Unified:32768K") == expected
    assert provenance.collect_caches(tmp_path / "absent") is None


def test_this_hosts_id_is_its_identity_and_every_plan_names_it():
    here = provenance.this_host_id()
    assert here == hostid.host_id(provenance.collect_host())
    plan = kitlib.plan("redis", environments=["native"], peer="netns")
    assert plan.host == here


def test_the_same_plan_on_two_machines_gets_two_run_ids_and_one_order():
    on_epyc = kitlib.plan("redis", environments=["native", "docker-nat-volume"], peer="netns")
    on_xeon = Plan.model_validate(
        on_epyc.model_dump(mode="json") | {"host": hostid.host_id(_with(EPYC, "cpu", model="Xeon")), "seed": None}
    )
    assert on_epyc.run_id != on_xeon.run_id
    assert on_epyc.seed == on_xeon.seed, "the machine changes where results go, not the order they are taken in"


def test_the_sample_is_one_machine_named_by_its_provenance():
    """data/sample was measured on one machine: every folder's records name the id its provenance gives
    (the hardware with the machine-id), as written, never rewritten when loaded."""
    frame = load_records(PROJECT_ROOT / "data" / "sample")
    by_folder = frame.groupby("source")["host"].unique()
    assert all(len(ids) == 1 for ids in by_folder), "one machine per run folder of the sample"
    expected = {
        source: hostid.host_id(RunStore(Path(source)).sessions()[-1]["host"]) for source in frame["source"].unique()
    }
    assert {s: ids[0] for s, ids in by_folder.items()} == expected, "ids recomputed from provenance"
    assert len(set(expected.values())) == 1, "one machine made the whole sample"
    for source in frame["source"].unique():
        on_disk = pd.read_csv(Path(source) / "records.csv", dtype={"host": str})
        assert set(on_disk["host"]) == set(expected.values()), source


def _measured_elsewhere(root: Path, host: dict) -> RunStore:
    store = RunStore(root / "redis" / "quick-x")
    store.append_provenance({"host": host})
    return store


def test_a_folder_measured_on_other_hardware_is_refused_for_resume(tmp_path):
    here = provenance.collect_identity()
    plan = kitlib.plan("redis", environments=["native"], peer="netns").model_dump(mode="json")
    _measured_elsewhere(tmp_path / "same", here).write_plan(plan)  # this machine's folder resumes
    other_model = "AMD EPYC 7B13" if "EPYC" not in str(here["cpu"].get("model")) else "Intel(R) Xeon(R) Processor"
    clone = _with(here, "cpu", model=other_model, logical_cpus=here["cpu"]["logical_cpus"] + 2)
    store = _measured_elsewhere(tmp_path / "clone", clone)
    with pytest.raises(
        KitError, match=rf"another machine \(cpu_model: {re.escape(repr(other_model))} there, "
    ) as refused:
        store.write_plan(plan)
    assert f"logical_cpus: {here['cpu']['logical_cpus'] + 2} there, {here['cpu']['logical_cpus']} here" in str(
        refused.value
    )
    assert not (store.root / "plan.json").exists()
    with pytest.raises(KitError, match="the plan was made on host 0123456789ab, this is host"):
        RunStore(tmp_path / "fresh").write_plan(plan | {"host": "0123456789ab"})


def test_differing_caches_are_named_by_level():
    xeon = _with(EPYC, "cpu", caches={"L2": "1024K", "L3": "266240K"})
    assert hostid.differences(xeon, EPYC) == ["caches L3: '266240K' there, '32768K' here"]


# -- the instance identity: what tells clones of one image apart ------------------------------------
def test_facts_recorded_before_the_instance_identity_keep_their_id():
    """Provenance of earlier runs holds no instance facts: their id is what it always was."""
    assert hostid.host_id(EPYC) == "1caaddeafbf5"
    assert hostid.host_id({**EPYC, "instance": {"unavailable": "read-only /var/lib"}}) == "1caaddeafbf5"
    sample = RunStore(PROJECT_ROOT / "data" / "sample" / "cpu" / "quick-82ebf9c989").sessions()[-1]["host"]
    assert "instance" not in sample and hostid.host_id(sample) == "21300648cfda"


def test_clones_of_one_image_with_one_hardware_get_two_ids_by_their_instance():
    """The case of the issue: one machine-id, one masked CPU model, MemTotal 508 kB apart."""
    made_sample = _with(EPYC, "memory", MemTotal="24684092 kB")
    new = _with(EPYC, "memory", MemTotal="24683584 kB")
    assert hostid.host_id(made_sample) == hostid.host_id(new), "the hardware alone takes them for one"
    a = {**made_sample, "instance": {"instance_id": "a" * 32, "product_uuid": None}}
    b = {**new, "instance": {"instance_id": "b" * 32, "product_uuid": None}}
    assert hostid.host_id(a) != hostid.host_id(b)
    assert hostid.differences(a, b) == [f"instance_id: {'a' * 32!r} there, {'b' * 32!r} here"]
    assert hostid.host_id(b) != hostid.host_id(new), "the instance is part of the id"


def test_memory_near_a_128_mib_edge_no_longer_moves_the_id():
    """MemTotal 30 MB either side of a 128 MiB step's edge (23,616 MiB) made two ids; counted in the
    whole GiB installed (24) they make one."""
    edge_kib = (23_552 + 64) * 1024
    below, above = (_with(EPYC, "memory", MemTotal=f"{edge_kib + d} kB") for d in (-30_000, 30_000))
    assert hostid.host_id(below) != hostid.host_id(above), "the old step moved"
    instance = {"instance_id": "c" * 32}
    assert hostid.host_id({**below, "instance": instance}) == hostid.host_id({**above, "instance": instance})
    assert hostid.memory_gib("24683584 kB") == hostid.memory_gib("24684092 kB") == 24


def test_records_made_here_never_carry_the_samples_id():
    sample_ids = set(load_records(PROJECT_ROOT / "data" / "sample")["host"])
    assert provenance.this_host_id() not in sample_ids
    here = provenance.collect_host()
    assert hostid.instance_facts(here)["instance_id"], "this machine's id holds its instance identity"
    assert hostid.host_id(here) == provenance.this_host_id()


def test_a_folder_made_on_a_clone_with_this_hardware_is_refused(tmp_path):
    """A clone's run folder: this machine's hardware and machine-id, no instance identity (as the
    sample's), its plan naming the id that hardware alone gives."""
    here = provenance.collect_identity()
    clone = {key: value for key, value in here.items() if key != "instance"}
    plan = kitlib.plan("redis", environments=["native"], peer="netns").model_dump(mode="json")
    store = _measured_elsewhere(tmp_path, clone)
    with pytest.raises(KitError, match="without an instance identity, which every clone") as refused:
        store.write_plan(plan | {"host": hostid.host_id(clone)})
    assert f"this is host {provenance.this_host_id()}" in str(refused.value)
    assert not (store.root / "plan.json").exists()


def test_the_samples_own_folder_is_not_resumed_here(tmp_path):
    import json
    import shutil

    source = PROJECT_ROOT / "data" / "sample" / "net" / "quick-5b8c9527da"
    copy = tmp_path / "net" / source.name
    shutil.copytree(source, copy)
    plan = json.loads((copy / "plan.json").read_text())["plan"]
    with pytest.raises(KitError, match="another machine|the plan was made on host 21300648cfda"):
        RunStore(copy).write_plan(plan)
