"""The tour for a course: every chapter runs offline on data/sample, says what the records it shows say
(the sentences it displays are those its functions compute from them), and its exercises are checked
against the records (blanks are said to be blank)."""

from __future__ import annotations

import nbformat
import pytest

from kitlib.analyse import tour
from kitlib.core import paths
from kitlib.notebooks import execute

TOUR = paths.notebooks_root() / "tour"
CHAPTERS = sorted(TOUR.glob("*.ipynb"))

#: chapter -> the sentences it displays, computed from the records
FINDINGS = {
    "01": lambda df: [tour.request_paths(df)],
    "02": lambda df: [tour.shares_tails(df), tour.fio_tails(df)],
    "03": lambda df: [tour.littles_law_findings(df)],
    "04": lambda df: [tour.quota_cliff(df)],
    "05": lambda df: [tour.interval_lessons(tour.redis_ratios(df)), tour.noise_floor(df)],
}


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_runs_with_papermill_and_shows_what_its_records_say(chapter, tmp_path):
    out = execute(chapter, tmp_path / chapter.name, {})
    notebook = nbformat.read(out, 4)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "records from data/sample" in text and "0 of 2 correct" in text
    noisy = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not noisy, noisy
    shown = [o.data["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    assert shown == FINDINGS[chapter.stem[:2]](tour.sample())
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    drawn = sum("tour.paths_diagram()" in c.source or "figures." in c.source or "_figure(" in c.source
                or "ratio_intervals(" in c.source for c in notebook.cells if c.cell_type == "code")  # fmt: skip
    assert len(figures) == drawn  # one figure per drawing cell: the chapter's records are one host's
