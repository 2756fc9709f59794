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
