"""The latency study: the request-response parser on real outputs, the plan's bounds and the analysis."""

from __future__ import annotations

import pandas as pd
import pytest

import kitlib
from kitlib.core import latency_analysis
from kitlib.core.errors import ParseError, PlanError
from kitlib.measure import parsers

from ..conftest import DATA


def test_parser_on_a_real_client_output():
    found = {
        (m.metric, m.dims.get("percentile")): m.value
        for m in parsers.parse_file("kit-rr", DATA / "kit-rr" / "loopback-500.txt")
    }
    assert found[("requests", None)] == 500
    assert found[("latency_mean", None)] == pytest.approx(90.21724)
    assert found[("latency_median", None)] == pytest.approx(83.92)
    assert found[("slow_requests", None)] == 2
    assert found[("server_cpu_utilization", None)] == pytest.approx(56.8131, rel=1e-4)
    assert found[("latency_percentile", 50.0)] == pytest.approx(found[("latency_median", None)])


def test_parser_refuses_truncated_and_garbage(tmp_path):
    text = (DATA / "kit-rr" / "loopback-500.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(ParseError, match="kit-rr.*cut.txt.*truncated"):
        parsers.parse_file("kit-rr", cut)
    lying = tmp_path / "lying.txt"
    lying.write_text(text.replace("requests=500", "requests=600"))
    with pytest.raises(ParseError, match="500 latencies for 600 requests"):
        parsers.parse_file("kit-rr", lying)


def test_bad_parameters():
    with pytest.raises(PlanError, match="quotas .* must be between 1000 and 1e\\+06, got \\[500\\]"):
        kitlib.plan("latency", quotas=[500, 2000])
    with pytest.raises(PlanError, match="unknown 'cpu'; choose from shares, quota, bridge, storage"):
        kitlib.plan("latency", parts=["cpu"])
    with pytest.raises(PlanError, match="layer counts must be between 1 and 100"):
        kitlib.plan("latency", layers=[0])
    plan = kitlib.plan("latency", parts=["quota"], quotas=[2000, 8000])
    assert plan.environments == ("docker-host-volume+period10000+quota2000", "docker-host-volume+period10000+quota8000")


def test_the_shares_part_measures_an_a_a_pair_of_native():
    """`native+replica` beside `native` (the A/A control a machine without root or Docker can still run)
    gets the shares part's points; a Docker label with more options than shares does not."""
    from kitlib.measure.run.runner import plan_units

    plan = kitlib.plan("latency", environments=["native", "native+replica"], parts=["shares"], peer="loopback")
    units = plan_units(plan)
    assert {u.env for u in units} == {"native", "native+replica"}
    assert {u.workload.name for u in units} == {"shares"}
    shares = kitlib.plan("latency", parts=["shares"])
    workload = kitlib.measure.experiments.get("latency").workloads(shares)[0]
    assert workload.applies_to("docker-host-volume+shares1024+replica")
    assert not workload.applies_to("docker-host-volume+quota5000+shares1024")


def test_bridge_fit_tells_offset_from_proportion():
    sizes = [1, 10, 30, 50, 70, 100]
    fixed = pd.DataFrame({"size_kb": sizes * 2, "difference_us": [30.0, 31, 29, 30.5, 29.5, 30] * 2})
    proportional = pd.DataFrame({"size_kb": sizes * 2, "difference_us": [1.0 * s + 0.5 for s in sizes] * 2})
    assert latency_analysis.bridge_fit(fixed).verdict == "fixed offset"
    assert latency_analysis.bridge_fit(fixed).offset_us == pytest.approx(30.0, abs=0.5)
    assert latency_analysis.bridge_fit(proportional).verdict == "proportional to size"
