"""The tour for a course: every chapter runs offline on data/sample, and its exercises are checked
against the records (right answers pass, wrong ones do not, blanks are said to be blank)."""

from __future__ import annotations

import nbformat
import pytest

from kitlib import paths
from kitlib.notebooks import execute

TOUR = paths.notebooks_root() / "tour"
CHAPTERS = sorted(TOUR.glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_runs_with_papermill(chapter, tmp_path):
    out = execute(chapter, tmp_path / chapter.name, {})
    notebook = nbformat.read(out, 4)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "records from data/sample" in text and "0 of 2 correct" in text
    noisy = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not noisy, noisy
