"""The claims notebook as `papermill -p results_dirs '["data/sample"]'` runs it: the JSON text is read
as the list it spells, and every claim's verdict is shown, grouped by verdict."""

from __future__ import annotations

import pytest

from kitlib.analyse import analysis
from kitlib.core import paths
from kitlib.notebooks import execute

from ..support import sample
from ..support.another_machine import copy_as_another_machine
from ..support.notebook_tables import verdict_groups

NOTEBOOK = paths.notebooks_root() / "analysis" / "claims.ipynb"


@pytest.mark.slow
def test_claims_notebook_with_results_dirs_as_papermill_p_passes_it(tmp_path):
    # the sample and a run of a second machine: more verdicts (claim × host) than pandas shows by itself
    other = tmp_path / "other"
    copy_as_another_machine(sample.run_with("net", "native"), other / "net" / "q")
    parameters = {
        # what `-p results_dirs '["data/sample", "…/other"]'` hands the notebook
        "results_dirs": f'["data/sample", "{other}"]',
        "interactive": "False",
        "figures_dir": str(tmp_path / "figures"),
        "tables_dir": str(tmp_path / "tables"),
        "summary_path": str(tmp_path / "summary.md"),
    }
    out = execute(NOTEBOOK, tmp_path / "claims.ipynb", parameters)
    shown = verdict_groups(out)
    verdicts = analysis.claims_table(analysis.load(["data/sample", other]))
    expected = analysis.by_verdict(verdicts)
    assert list(shown) == list(expected) and len(expected) >= 3
    assert sum(len(rows) for rows in shown.values()) == len(verdicts) > 60  # pandas alone shows 10 of >60
    for status, group in expected.items():
        assert shown[status] == list(zip(group["claim"], group["host"], strict=True)), status
    print({status: len(rows) for status, rows in shown.items()})
