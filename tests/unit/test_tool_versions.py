"""Tool versions wherever records are compared: named where the environments compared differ, and an
interval pooling runs of two versions left undecided unless asked. On the sample's block run, and on a
copy of it whose provenance says fio was upgraded before it ran (the same records: only what the
versions change is under test)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from kitlib import specs
from kitlib.analyse import analysis, claims
from kitlib.core import tool_versions
from kitlib.measure import provenance
from kitlib.results import load_records

from ..support import sample

BLOCK = sample.run_with("block", "native")
UPGRADED = "quick-fio335"


@pytest.fixture(scope="module")
def two_fio_versions(tmp_path_factory) -> pd.DataFrame:
    """The block run (fio 3.33-3 in every environment) and the same run again under fio 3.35-1."""
    root = tmp_path_factory.mktemp("results")
    again = root / "block" / UPGRADED
    shutil.copytree(BLOCK, again)
    text = (again / "records.csv").read_text().replace(BLOCK.name, UPGRADED).replace("fio 3.33-3", "fio 3.35-1")
    (again / "records.csv").write_text(text)
    document = json.loads((again / "provenance.json").read_text())
    for versions in document["sessions"][-1]["tool_versions"].values():
        versions["fio"] = "3.35-1"
    (again / "provenance.json").write_text(json.dumps(document))
    return load_records(BLOCK, again)


def test_the_text_names_the_environments_packages_then_the_clients():
    text = tool_versions.describe(
        ["redis-server", "absent"], ["redis-tools"], {"redis-server": "5:7.0.15-1~deb12u7"}, {"redis-tools": "7.0"}
    )
    assert text == "redis-server 5:7.0.15-1~deb12u7; client redis-tools 7.0"
    assert tool_versions.parse(text) == {"redis-server": "5:7.0.15-1~deb12u7", "client redis-tools": "7.0"}
    assert tool_versions.describe(["fio"], [], {}, {}) is None and tool_versions.parse(float("nan")) == {}


def test_one_run_of_one_version_is_neither_mixed_nor_different():
    rows = load_records(BLOCK)
    assert set(rows["tool_versions"]) == {"fio 3.33-3"}
    assert tool_versions.mixed(rows, ["env", "workload", "metric"]) == []
    assert tool_versions.between(rows) == []


def test_runs_of_two_versions_are_named_per_environment(two_fio_versions):
    pooled = tool_versions.mixed(two_fio_versions, ["env"])
    assert f"native: fio 3.33-3 (run {BLOCK.name}) vs 3.35-1 (run {UPGRADED})" in pooled
    assert len(pooled) == two_fio_versions["env"].nunique()


def test_a_claim_pooling_two_versions_is_not_decided_unless_allowed(two_fio_versions):
    refused = claims.evaluate_all(two_fio_versions, "block").set_index("claim")
    allowed = claims.evaluate_all(two_fio_versions, "block", allow_mixed_versions=True).set_index("claim")
    unknown = claims.evaluate_all(two_fio_versions.drop(columns="tool_versions"), "block").set_index("claim")
    decided = unknown[unknown["status"].isin([claims.REPRODUCED, claims.NOT_REPRODUCED, claims.INCONCLUSIVE])].index
    assert len(decided) >= 2
    for name in decided:
        assert refused.at[name, "status"] == claims.INCONCLUSIVE and pd.isna(refused.at[name, "needed"])
        assert refused.at[name, "reason"].startswith("not decided: it pools runs of differing tool versions (")
        assert f"fio 3.33-3 (run {BLOCK.name}) vs 3.35-1 (run {UPGRADED})" in refused.at[name, "reason"]
        assert "allow_mixed_versions=True" in refused.at[name, "reason"]
        assert allowed.at[name, "status"] == unknown.at[name, "status"]
        assert allowed.at[name, "ratio"] == unknown.at[name, "ratio"]
        assert allowed.at[name, "reason"].startswith(unknown.at[name, "reason"])
        assert "pools runs of differing tool versions (allowed)" in allowed.at[name, "reason"]
    print(f"{len(decided)} block claims left undecided on two fio versions, decided as before when allowed")


def test_the_overhead_table_compares_no_side_of_two_versions_unless_allowed(two_fio_versions):
    refused = analysis.overhead_table(two_fio_versions)
    assert refused["verdict"].str.startswith("not comparable: pools runs of differing tool versions").all()
    assert refused["tool_versions"].str.contains(f"3.35-1 (run {UPGRADED})", regex=False).all()
    allowed = analysis.overhead_table(two_fio_versions, allow_mixed_versions=True)
    assert allowed["verdict"].isin(["significant", "not significant"]).all()


def test_the_statistics_table_keeps_each_version_a_row_of_its_own(two_fio_versions):
    table = analysis.statistics_table(two_fio_versions)
    assert set(table["tool_versions"]) == {"fio 3.33-3", "fio 3.35-1"}
    one = analysis.statistics_table(load_records(BLOCK))
    assert len(table) == 2 * len(one)


def test_every_declared_tool_is_a_package_provenance_records():
    for name in specs.names():
        schema = specs.schema(name)
        declared = {*schema.tools, *schema.client_tools}
        for workload in schema.workloads:
            declared |= {tool for side in schema.tools_of(workload) for tool in side}
        assert declared <= set(provenance.TOOL_PACKAGES), (name, declared - set(provenance.TOOL_PACKAGES))
