"""CPU and memory experiments: quick notebook runs on native and Docker with the kit's own programs."""

from __future__ import annotations

import pandas as pd
import pytest

from kitlib.core import paths
from kitlib.measure.experiments.programs import source_digest
from kitlib.notebooks import execute

from ..conftest import leftovers


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("cpu", {"corpus_mb": 4, "linpack_n": 1500}),
        ("memory", {"llc_multiple": 0.25, "gups_min_table_mb": 64}),
    ],
)
def test_quick_notebook_run(name, parameters, docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    execute(
        paths.notebooks_root() / "experiments" / f"{name}.ipynb",
        results / f"{name}.ipynb",
        {
            "results_dir": str(results),
            "figures_dir": str(figures),
            "tables_dir": str(results / "tables"),
            "repetitions": 1,
            **parameters,
        },
    )
    run_dir = next(results.glob(f"{name}/*/"))
    failures = run_dir / "failures.csv"
    assert not failures.exists() or pd.read_csv(failures).empty, failures.read_text()
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == {"native", "docker-host-volume"}
    rates = records[records["metric"] != "error_fraction"]
    assert (rates["value"] > 0).all() and (records["value"] >= 0).all()
    expected = {"cpu": {"pxz", "linpack"}, "memory": {"stream", "randomaccess"}}[name]
    assert set(records["workload"]) == expected
    assert (results / "tables" / f"table1-{name}.md").exists()
    # the kit's own programs measured, built from the sources shipped (the image's and native's alike)
    programs = records.dropna(subset=["program_source"])
    expected_tools = {"cpu": {"kit-linpack"}, "memory": {"kit-stream", "kit-gups"}}[name]
    assert set(programs["tool"]) == expected_tools
    for tool, digests in programs.groupby("tool")["program_source"]:
        assert set(digests) == {source_digest(tool)}, tool
    # every point bracketed by the machine's capacity probe (kitlib.measure.capacity), in % of the run's usual
    assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()
    if name == "memory":
        assert len(list(figures.glob("memory-stream-kernels-*.png"))) == 1  # one file per host: this one
        assert set(records.loc[records["metric"] == "bandwidth", "kernel"]) == {"Copy", "Scale", "Add", "Triad"}
    assert leftovers(docker_client) == []
