"""MySQL experiment: the sysbench parser on real outputs and the plan's bounds."""

from __future__ import annotations

import pytest

import kitlib
from kitlib.core.errors import ParseError, PlanError
from kitlib.measure import parsers

from ..conftest import DATA


def test_parser_on_a_real_run():
    found = {m.metric: m.value for m in parsers.parse_file("sysbench", DATA / "sysbench" / "run-t2.txt")}
    assert found["tps"] == pytest.approx(632.60)
    assert found["qps"] == pytest.approx(12652.02)
    assert found["latency_mean"] == pytest.approx(3.16)
    assert found["latency_p95"] == pytest.approx(4.49)
    assert (found["errors"], found["reconnects"]) == (0, 0)
    assert found["duration"] == pytest.approx(3.0028)


def test_parser_refuses_a_failed_connection_and_truncation(tmp_path):
    with pytest.raises(ParseError, match="sysbench.*FATAL: unable to connect to MySQL server"):
        parsers.parse_file("sysbench", DATA / "sysbench" / "refused.txt")
    text = (DATA / "sysbench" / "run-t2.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("transactions:")])
    with pytest.raises(ParseError, match="sysbench"):
        parsers.parse_file("sysbench", cut)


def test_bad_parameters():
    with pytest.raises(PlanError, match="thread counts must be between 1 and 4096"):
        kitlib.plan("mysql", threads=[0, 4])
    with pytest.raises(PlanError, match="buffer_pool_mb"):
        kitlib.plan("mysql", buffer_pool_mb=1)
