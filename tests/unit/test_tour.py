"""The tour for a course: every chapter runs offline on data/sample, and its exercises are checked
against the records (right answers pass, wrong ones do not, blanks are said to be blank)."""

from __future__ import annotations

import nbformat
import pytest

from kitlib import paths, tour

TOUR = paths.notebooks_root() / "tour"
CHAPTERS = sorted(TOUR.glob("*.ipynb"))


def test_the_tour_has_its_five_chapters_each_with_exercises_and_a_run_line():
    assert [p.stem[:2] for p in CHAPTERS] == ["01", "02", "03", "04", "05"]
    for path in CHAPTERS:
        notebook = nbformat.read(path, 4)
        text = "\n".join(cell.source for cell in notebook.cells)
        assert notebook.metadata.kernelspec.name == "kitlib"
        assert f'tour.check("{path.stem[:2]}", answers)' in text
        assert "## Run it yourself" in text and "kit run " in text
        assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")


@pytest.fixture(scope="module")
def records():
    return tour.sample()


@pytest.mark.parametrize("chapter", sorted(tour.EXERCISES))
def test_exercises_accept_the_records_answers_and_refuse_others(chapter, records):
    right = tour.expected(chapter, records)
    assert (tour.check(chapter, right, records)["verdict"] == "correct").all()
    wrong = {k: (v + " not" if isinstance(v, str) else v * 1.5 + 1) for k, v in right.items()}
    assert not (tour.check(chapter, wrong, records)["verdict"] == "correct").any()
    assert (tour.check(chapter, {}, records)["verdict"] == "not answered").all()


def test_the_tour_reads_one_host(records):
    """data/sample holds runs of more than one machine; the lessons compare environments of one."""
    assert records["host"].nunique() == 1 and len(records) > 1000
