"""The analysis notebooks on data/sample/ (real runs of the kit), through papermill."""

from __future__ import annotations

import pandas as pd
import pytest

from kitlib.analyse import analysis
from kitlib.core import paths
from kitlib.notebooks import execute
from kitlib.reproduce import declared_parameters

from ..support import sample
from ..support.notebook_tables import verdict_groups

SAMPLE = paths.PROJECT_ROOT / "data" / "sample"
NOTEBOOKS = paths.notebooks_root() / "analysis"
EXPERIMENT_NOTEBOOKS = sorted((paths.notebooks_root() / "experiments").glob("*.ipynb"))


@pytest.fixture(scope="module")
def sample_records():
    records = analysis.load([SAMPLE])
    assert not records.empty, "data/sample holds no records"
    return records


def test_sample_is_real_kit_output_with_provenance(sample_records):
    import json

    for records_csv in SAMPLE.glob("*/*/records.csv"):
        provenance = json.loads((records_csv.parent / "provenance.json").read_text())
        session = provenance["sessions"][0]
        assert session["host"]["kitlib"]["version"]
        assert session["commands"], "every command line is recorded"
    assert {"redis", "latency"} <= set(sample_records["experiment"])


@pytest.mark.parametrize("name", ["statistics", "figures", "littles-law", "claims", "many-labs"])
def test_an_analysis_notebook_declares_only_parameters_it_reads(name):
    import re

    import nbformat

    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", 4)
    code = "\n".join(
        c.source for c in notebook.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
    )
    unread = [p for p in declared_parameters(NOTEBOOKS / f"{name}.ipynb") if not re.search(rf"\b{p}\b", code)]
    assert unread == []


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")) + EXPERIMENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_every_path_and_list_parameter_is_read_by_the_shared_parser(path):
    """What `papermill -p` passes as text means in every notebook what `-y` passes as a value: each
    analysis parameter, and each experiment notebook's output folders, go through kitlib.core.parameters
    (the plan's own parameters go through it in `kitlib.plan`)."""
    import re

    import nbformat

    notebook = nbformat.read(path, 4)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    names = declared_parameters(path) if path.parent == NOTEBOOKS else {"results_dir", "figures_dir"}
    unread = [n for n in sorted(names) if not re.search(rf"parameters\.as_\w+\(\"{n}\", {n}\)", code)]
    assert unread == []


@pytest.mark.parametrize("name", ["statistics", "figures", "littles-law", "claims"])
def test_analysis_notebook_runs_on_the_sample(name, tmp_path):
    parameters = {
        "results_dirs": [str(SAMPLE)],
        "figures_dir": str(tmp_path / "figures"),
        "tables_dir": str(tmp_path / "tables"),
    }
    if name == "claims":
        parameters.update(summary_path=str(tmp_path / "summary.md"), interactive=False)
    declared = declared_parameters(NOTEBOOKS / f"{name}.ipynb")
    execute(
        NOTEBOOKS / f"{name}.ipynb", tmp_path / f"{name}.ipynb", {k: v for k, v in parameters.items() if k in declared}
    )
    if name == "statistics":
        table = pd.read_csv(tmp_path / "tables" / "redis-statistics.csv")
        assert {"mean", "std", "median", "min", "max", "n", "ci_low", "ci_high"} <= set(table.columns)
        assert (tmp_path / "tables" / "redis-vs-native.csv").exists()
        assert "PXZ (MB/s)" in (tmp_path / "tables" / "table1.md").read_text()
    if name in ("figures", "claims"):
        for figure in (
            "redis-fig8-9-throughput-latency",
            "latency-closer-look-fig2-quota",
            "latency-closer-look-fig3-bridge",
        ):
            for suffix in ("png", "pdf"):  # one host's, of the runs it draws: `<figure>-<host>-<run>`
                assert len(list((tmp_path / "figures").glob(f"{figure}-{sample.main_host()}-*.{suffix}"))) == 1
    if name == "littles-law":
        table = pd.read_csv(tmp_path / "tables" / "littles-law.csv")
        assert {"N", "XR", "relative_error", "flagged"} <= set(table.columns)
    if name == "claims":
        shown = verdict_groups(tmp_path / "claims.ipynb")
        verdicts = analysis.by_verdict(analysis.claims_table(analysis.load([SAMPLE])))
        assert list(shown) == list(verdicts)
        for status, group in verdicts.items():
            assert shown[status] == list(zip(group["claim"], group["host"], strict=True)), status
        summary = (tmp_path / "summary.md").read_text()
        assert "| **not testable here** |" in summary and "interval of the effect" in summary and "at 95%" in summary
        assert "redis-fig8-9-throughput-latency" in summary


def test_notebooks_stop_at_a_folder_that_holds_no_records(tmp_path):
    """An analysis of zero records would mark every claim "not testable here": the folder is named instead."""
    import papermill

    (tmp_path / "empty").mkdir()
    with pytest.raises(papermill.PapermillExecutionError, match="empty' holds no records"):
        execute(
            NOTEBOOKS / "statistics.ipynb",
            tmp_path / "out.ipynb",
            {"results_dirs": [str(tmp_path / "empty")], "tables_dir": str(tmp_path / "tables")},
        )


def test_claims_on_the_sample(sample_records):
    """No claim decided on fewer than 3 runs a side; none against its interval; evidence matches verdict."""
    verdicts = analysis.claims_table(sample_records).set_index("claim")
    tcg_host = sample_records.loc[sample_records["env"] == "qemu-tcg", "host"].iloc[0]
    kvm = verdicts.loc[["kvm_slower_redis"]]
    assert "software emulation" in kvm.loc[kvm["host"] == tcg_host, "reason"].iloc[0]
    decided = verdicts[verdicts["status"].isin(["reproduced", "not reproduced"])]
    assert not decided.empty and (decided["n"] >= 3).all()
    for _, row in decided.iterrows():
        assert row["ci_low"] <= row["ratio"] <= row["ci_high"] or row["ratio"] != row["ratio"]
        words = "lies inside the band" if row["status"] == "reproduced" else "lies entirely"
        assert words in row["reason"] or row.name in ("quota_cliff",), row["reason"]
