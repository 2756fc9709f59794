"""CPU and memory experiments: parsers on real hpcc and xz outputs, sizing rules, and quick notebook runs."""

from __future__ import annotations

import pandas as pd
import pytest

import kitlib
from kitlib.analyse import tables
from kitlib.core.errors import ParseError, PlanError
from kitlib.measure import parsers
from kitlib.measure.experiments import hpcc_run

from ..conftest import DATA

HPCC = DATA / "hpcc" / "hpccoutf-n8000-np2.txt"
XZ = DATA / "xz" / "corpus16m-t2.txt"


def test_hpcc_parser_on_a_real_result_file():
    found = {(m.metric, m.dims.get("kernel"), m.dims.get("variant")): m.value for m in parsers.parse_file("hpcc", HPCC)}
    assert found[("gflops", None, None)] == pytest.approx(85.9122)
    assert found[("hpl_n", None, None)] == 8000
    assert found[("bandwidth", "Triad", "Star")] == pytest.approx(18.0244)
    assert found[("gups", None, "Star")] == pytest.approx(0.107722)
    assert found[("vector_size", None, None)] == 10666666


def test_hpcc_parser_refuses_unfinished_and_garbage(tmp_path):
    cut = tmp_path / "hpccoutf.txt"
    cut.write_text(HPCC.read_text()[: len(HPCC.read_text()) // 2])
    with pytest.raises(ParseError, match="hpcc.*no complete summary"):
        parsers.parse_file("hpcc", cut)
    failed = tmp_path / "failed.txt"
    failed.write_text(HPCC.read_text().replace("Success=1", "Success=0"))
    with pytest.raises(ParseError, match="Success=0"):
        parsers.parse_file("hpcc", failed)


def test_xz_parser_on_a_real_run(tmp_path):
    found = {m.metric: m.value for m in parsers.parse_file("xz", XZ)}
    assert found["elapsed"] == pytest.approx(3.721)
    assert found["throughput"] == pytest.approx(16777234 / 3.721 / 1e6)
    assert found["ratio"] == pytest.approx(0.390)
    cut = tmp_path / "cut.txt"
    cut.write_text(XZ.read_text().splitlines()[0] + "\n")
    with pytest.raises(ParseError, match="xz"):
        parsers.parse_file("xz", cut)


def test_xz_parser_on_a_run_under_a_second():
    """Below one second xz prints neither its rate nor its time, only sizes and the ratio."""
    found = {m.metric: m.value for m in parsers.parse_file("xz", DATA / "xz" / "corpus4m-t2-under-a-second.txt")}
    assert found == pytest.approx({"throughput": 4194304 / 0.985 / 1e6, "elapsed": 0.985, "ratio": 0.398})


def test_sizing_rules():
    assert hpcc_run.grid(2) == (1, 2) and hpcc_run.grid(16) == (4, 4) and hpcc_run.grid(6) == (2, 3)
    n = hpcc_run.n_for_stream(32 * 1024**2, 2, 4.0)
    assert n * n / (3 * 2) * 8 >= 4 * 32 * 1024**2  # each array at least 4 × the cache
    assert hpcc_run.n_for_memory(24 * 1024**3, 0.5, 6000) == 6000
    assert "1            Ps" in hpcc_run.input_file(4000, 2) and "4000         Ns" in hpcc_run.input_file(4000, 2)


def test_corpus_is_deterministic(tmp_path):
    import hashlib
    import subprocess
    import sys

    from kitlib.core import services

    def make(name: str, size: int, seed: int) -> str:
        subprocess.run(
            [sys.executable, "-c", services.source("corpus"), str(tmp_path / name), str(size), str(seed)],
            check=True,
            timeout=60,
        )
        return hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()

    assert make("a", 200_000, 7) == make("b", 200_000, 7)
    assert make("c", 200_001, 7) != make("a", 200_000, 7)
    assert (tmp_path / "c").stat().st_size == 200_001


def test_table_one_from_synthetic_records():
    rows = [
        {"workload": "pxz", "metric": "throughput", "env": env, "value": v}
        for env, values in (("native", [10.0, 12.0]), ("docker-host-volume", [11.0, 11.0]))
        for v in values
    ]
    table = tables.table_one(pd.DataFrame(rows))
    docker = table[table["env"] == "docker-host-volume"].iloc[0]
    assert docker["mean"] == 11.0 and docker["ratio_to_native"] == 1.0 and docker["n"] == 2
    assert tables.as_cells(table).loc[("unknown", "PXZ (MB/s)"), "native"] == "11 ± 1.4 (1.00)"


def test_bad_parameters():
    with pytest.raises(PlanError, match="corpus_mb"):
        kitlib.plan("cpu", corpus_mb=0)
    with pytest.raises(PlanError, match="llc_multiple"):
        kitlib.plan("memory", llc_multiple=-1)
