"""The instance identity on real files: written once with its mode, renewed on a clone, refused when
another user owns it or others may write it."""

from __future__ import annotations

import json
import os
import stat

import pytest

from kitlib.core import instance, owned_files
from kitlib.core.errors import KitError

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="root's file, and files of another owner, need root")


def _paths(tmp_path):
    uuid, cloud = tmp_path / "product_uuid", tmp_path / "cloud-instance-id"
    return tmp_path / "var" / "lib" / "kitlib" / "instance-id", uuid, cloud


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@root_only
def test_root_writes_the_id_once_0644_and_reads_it_again(tmp_path):
    file, uuid, cloud = _paths(tmp_path)
    old = os.umask(0o077)  # a strict umask must not make the file unreadable to other users
    try:
        first = instance.collect(file, uuid, cloud)
    finally:
        os.umask(old)
    assert len(first["instance_id"]) == 32 and first["file"] == str(file)
    assert _mode(file) == 0o644 and os.stat(file).st_uid == 0 and _mode(file.parent) == 0o755
    assert instance.collect(file, uuid, cloud)["instance_id"] == first["instance_id"]
    assert [p.name for p in file.parent.iterdir()] == ["instance-id"], "no temp file left"


@root_only
def test_a_file_cloned_with_another_machines_product_uuid_is_written_anew(tmp_path):
    file, uuid, cloud = _paths(tmp_path)
    uuid.write_text("4c4c4544-0000-1000-8000-b2c04f4e3232\n")
    made = instance.collect(file, uuid, cloud)
    assert made["product_uuid"] == "4c4c4544-0000-1000-8000-b2c04f4e3232"
    uuid.write_text("4c4c4544-0000-1000-8000-b2c04f4e9999\n")  # the image now runs on another machine
    clone = instance.collect(file, uuid, cloud)
    assert clone["instance_id"] != made["instance_id"] and clone["product_uuid"].endswith("9999")
    assert json.loads(file.read_text())["instance_id"] == clone["instance_id"] and _mode(file) == 0o644


def test_a_cloud_instance_id_is_read_and_no_clouds_placeholder_is_not(tmp_path):
    file, uuid, cloud = _paths(tmp_path)
    cloud.write_text("i-0abc1234def567890\n")
    assert instance.collect(file, uuid, cloud)["cloud_instance_id"] == "i-0abc1234def567890"
    cloud.write_text("iid-datasource-none\n")
    assert instance.collect(file, uuid, cloud)["cloud_instance_id"] is None


@root_only
def test_a_file_of_another_user_or_writable_by_others_is_refused(tmp_path):
    file, uuid, cloud = _paths(tmp_path)
    instance.collect(file, uuid, cloud)
    os.chown(file, 65534, 65534)
    refused = instance.collect(file, uuid, cloud)
    assert "instance_id" not in refused and "owned by uid 65534" in refused["unavailable"]
    os.chown(file, 0, 0)
    os.chmod(file, 0o666)
    assert "may be written by others (mode 0666)" in instance.collect(file, uuid, cloud)["unavailable"]
    os.chmod(file, 0o644)
    file.write_text("not an id\n")
    assert "holds no instance id" in instance.collect(file, uuid, cloud)["unavailable"]
    assert instance.describe(instance.collect(file, uuid, cloud)).startswith("no instance identity (")


def test_a_users_own_file_is_0600_in_a_folder_of_theirs_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = instance.user_file()
    assert path == tmp_path / "state" / "kitlib" / "instance-id"
    first = instance._own_file(path)
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert instance._own_file(path)["instance_id"] == first["instance_id"]


def test_two_writers_of_one_file_agree_on_the_first(tmp_path):
    path = tmp_path / "instance-id"
    assert owned_files.create_once(path, "first\n", 0o600)
    assert not owned_files.create_once(path, "second\n", 0o600)
    assert path.read_text() == "first\n" and sorted(p.name for p in tmp_path.iterdir()) == ["instance-id"]


def test_a_link_in_place_of_the_file_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text(json.dumps({"instance_id": "a" * 32}))
    (tmp_path / "instance-id").symlink_to(target)
    with pytest.raises(KitError, match="a link or an unreadable file"):
        owned_files.read_owned(tmp_path / "instance-id", os.geteuid())
