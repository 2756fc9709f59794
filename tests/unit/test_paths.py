"""Results folders resolve against the project root wherever a kernel runs; bad folders are named."""

from __future__ import annotations

import pytest

from kitlib.analyse import analysis
from kitlib.core import paths
from kitlib.core.errors import KitError


def test_relative_folders_resolve_against_the_project_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # as a Lab kernel in notebooks/analysis/ would be
    assert paths.resolve_results_dirs(["data/sample"]) == [paths.PROJECT_ROOT / "data" / "sample"]
    records = analysis.load(["data/sample"])
    assert len(records) > 0 and records["experiment"].nunique() > 3


def test_a_missing_folder_is_an_error_naming_it():
    with pytest.raises(KitError, match="'no/such/folder' is not a folder"):
        analysis.load(["no/such/folder"])


def test_a_folder_without_records_is_an_error_naming_it(tmp_path):
    with pytest.raises(KitError, match=f"{tmp_path.name}' holds no records"):
        analysis.load([str(tmp_path)])


def test_an_empty_default_results_folder_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RESULTS", str(tmp_path))
    with pytest.raises(KitError, match="point results_dirs at data/sample"):
        analysis.load(None)


def test_the_summary_of_results_is_replaced_only_by_results_or_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RESULTS", str(paths.PROJECT_ROOT / "data" / "sample"))
    assert paths.summary_target(None, None) == paths.results_root() / "summary.md"
    monkeypatch.setenv("KIT_RESULTS", str(tmp_path))
    assert paths.summary_target(None, ["data/sample"]) is None
    assert paths.summary_target(str(tmp_path / "s.md"), ["data/sample"]) == tmp_path / "s.md"


def _mode(path) -> int:
    import stat

    return stat.S_IMODE(path.lstat().st_mode)


def test_the_scratch_root_is_made_0700_and_refused_when_others_may_use_it(tmp_path, monkeypatch):
    import os

    scratch = tmp_path / "var-tmp" / "kitlib"
    monkeypatch.setenv("KIT_SCRATCH", str(scratch))
    old = os.umask(0)  # a lax umask must not make it world-writable
    try:
        assert paths.own_scratch_root() == scratch and _mode(scratch) == 0o700
    finally:
        os.umask(old)
    os.chmod(scratch, 0o755)
    assert paths.own_scratch_root() == scratch, "a folder of this user's others cannot write is used"
    os.chmod(scratch, 0o777)
    with pytest.raises(KitError, match=r"may be written by others \(mode 0777\)"):
        paths.own_scratch_root()
    os.chmod(scratch, 0o700)
    if os.geteuid() == 0:
        os.chown(scratch, 65534, 65534)
        with pytest.raises(KitError, match=f"owned by uid 65534, not {os.geteuid()}"):
            paths.own_scratch_root()
    scratch.rmdir()
    scratch.symlink_to(tmp_path)
    with pytest.raises(KitError, match="is not a folder"):
        paths.own_scratch_root()
