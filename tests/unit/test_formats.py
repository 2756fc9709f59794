"""The results format: every folder names its version, an older one is read through ordered steps in
memory (its files untouched), a newer one is refused naming both versions. On real folders of the
sample's older runs (copied to tests/data/formats)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from kitlib.core import hostid
from kitlib.core.errors import KitError
from kitlib.measure.store import RunStore
from kitlib.results import formats, load_records, read_folder

from ..conftest import DATA

V1 = DATA / "formats" / "v1" / "redis" / "quick-6236dad1a4"
V2 = DATA / "formats" / "v2" / "startup" / "quick-fd4026d3d9"


def _session(folder):
    return json.loads((folder / "provenance.json").read_text())["sessions"][-1]


def _digests(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_steps_go_one_version_at_a_time_up_to_the_current_format():
    assert [step.reads for step in formats.STEPS] == list(range(1, formats.FORMAT_VERSION))
    run = read_folder(V1)
    for step in formats.STEPS:
        assert run.version == step.reads
        run = step.apply(run)
        assert run.version == step.reads + 1, step.change
    assert run.version == formats.FORMAT_VERSION


def test_older_kits_folders_say_1_and_their_content_tells_1_from_2():
    for folder, version in ((V1, 1), (V2, 2)):
        assert json.loads((folder / "plan.json").read_text())["format_version"] == formats.UNVERSIONED
        assert read_folder(folder).version == version


def test_step_1_names_the_last_sessions_host_and_the_blocked_order():
    old = read_folder(V1)
    assert "host" not in old.records.columns and "order" not in old.plan
    run = formats.name_the_host_and_the_order(old)
    here = hostid.host_id(_session(V1)["host"])
    assert set(run.records["host"]) == {here} and run.order == "blocked"
    assert "peer" not in run.records.columns and "started" not in run.records.columns, "unknown stays unknown"
    assert "host" not in old.records.columns, "the folder as read is not changed"


def test_step_2_recomputes_the_machine_id_alone_ids_and_keeps_current_ones():
    old = read_folder(V2)
    host = _session(V2)["host"]
    assert set(old.records["host"]) == {hostid.legacy_host_id(host)} != {hostid.host_id(host)}
    run = formats.recompute_host_ids(old)
    assert set(run.records["host"]) == {hostid.host_id(host)}
    assert formats.recompute_host_ids(run).records["host"].equals(run.records["host"]), "a current id stays"


def test_step_3_names_the_tools_versions_per_environment_and_the_engine_version():
    session = _session(V1)
    run = formats.name_tool_versions_and_engine_version(formats.recompute_host_ids(read_folder(V1)))
    server = session["tool_versions"]["qemu-tcg"]["redis-server"]
    client = session["tool_versions"]["peer"]["redis-tools"]
    assert set(run.records["tool_versions"]) == {f"redis-server {server}; client redis-tools {client}"}
    docker = run.sessions[-1]["host"]["docker"]
    assert docker["engine_version"] == session["host"]["docker"]["engine"] and "engine" not in docker
    startup = formats.upgrade(read_folder(V2))
    assert startup.records["tool_versions"].isna().all(), "startup declares no package: nothing to name"


def test_loading_upgrades_in_memory_and_leaves_the_files_as_measured(tmp_path):
    before = {folder: _digests(folder) for folder in (V1, V2)}
    frame = load_records(V1, V2)
    assert {_digests(folder) == digests for folder, digests in before.items()} == {True}
    assert set(frame["host"]) == {hostid.host_id(_session(V1)["host"]), hostid.host_id(_session(V2)["host"])}
    assert frame["tool_versions"].notna().sum() == (frame["experiment"] == "redis").sum() > 0
    assert dict(frame.groupby("experiment")["order"].first()) == {"redis": "blocked", "startup": "interleaved"}


def test_a_newer_format_is_refused_naming_both_versions(tmp_path):
    newer = tmp_path / "startup" / V2.name
    shutil.copytree(V2, newer)
    document = json.loads((newer / "plan.json").read_text())
    (newer / "plan.json").write_text(json.dumps({**document, "format_version": formats.FORMAT_VERSION + 1}))
    newest = formats.FORMAT_VERSION
    said = rf"newer kitlib, in results format {newest + 1}; this one reads formats 1 to {newest}"
    with pytest.raises(KitError, match=said):
        load_records(tmp_path)
    with pytest.raises(KitError, match=said):
        RunStore(newer).write_plan(document["plan"])


def test_a_new_folder_names_the_current_format_and_is_read_without_steps(tmp_path):
    run = tmp_path / "startup" / "quick-new"
    shutil.copytree(V2, run)
    (run / "plan.json").unlink()
    plan = json.loads((V2 / "plan.json").read_text())["plan"]
    RunStore(run).write_plan(plan)
    assert json.loads((run / "plan.json").read_text())["format_version"] == formats.FORMAT_VERSION == 4
    folder = read_folder(run)
    assert folder.version == formats.FORMAT_VERSION
    assert formats.upgrade(folder) is folder, "a folder of the current format passes no step"
