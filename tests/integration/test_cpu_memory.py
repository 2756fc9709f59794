"""CPU and memory experiments: parsers on real hpcc and xz outputs, sizing rules, and quick notebook runs."""

from __future__ import annotations

import pandas as pd
import pytest

from kitlib import paths
from kitlib.notebooks import execute

from ..conftest import DATA, leftovers

HPCC = DATA / "hpcc" / "hpccoutf-n8000-np2.txt"
XZ = DATA / "xz" / "corpus16m-t2.txt"


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("cpu", {"corpus_mb": 4, "hpl_n": 1500}),
        ("memory", {"llc_multiple": 0.25}),
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
    assert (records["value"] > 0).all()
    expected = {"cpu": {"pxz", "linpack"}, "memory": {"stream", "randomaccess"}}[name]
    assert set(records["workload"]) == expected
    assert (results / "tables" / f"table1-{name}.md").exists()
    # Open MPI printed nothing: no transport or root warnings in any mpirun output
    for raw in run_dir.glob("raw/*.mpirun.txt"):
        assert raw.read_text().strip() == "", raw.read_text()
    if name == "memory":
        assert (figures / "memory-stream-kernels.png").exists()
        assert set(records.loc[records["metric"] == "bandwidth", "kernel"]) == {"Copy", "Scale", "Add", "Triad"}
    assert leftovers(docker_client) == []
