"""The OLTP scale-out: its parser on real captured outputs, its plan, and its claim on real quick runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import kitlib
from kitlib import specs
from kitlib.core.errors import ParseError, PlanError
from kitlib.measure import experiments
from kitlib.measure.experiments.scaleout_oltp import bundle_script
from kitlib.measure.parsers import scaleout_oltp

DATA = Path(__file__).parents[1] / "data" / "scaleout_oltp"
#: one quick run of this host (2 CPUs): native, docker-host-volume, docker-nat-volume, 3 trials each
RECORDS = DATA / "records-quick-3envs.csv"


def _claim():
    from kitlib.analyse.claims import seeds

    return next(c for c in seeds.CLAIMS if c.name == "scaleout_oltp_docker_adds_little")


def test_parser_keeps_each_instance_and_counts_the_aggregate_over_one_wall_clock():
    found = scaleout_oltp.parse((DATA / "clients-native.txt").read_text(), "clients-native.txt")
    tps = {m.dims["instance"]: m.value for m in found if m.metric == "tps"}
    assert set(tps) == {"0", "1", "all"}
    durations = {m.dims["instance"]: m.value for m in found if m.metric == "duration"}
    expected = (tps["0"] * durations["0"] + tps["1"] * durations["1"]) / durations["all"]
    assert tps["all"] == pytest.approx(expected)
    assert tps["all"] < tps["0"] + tps["1"]  # the wall clock covers every client's own run time
    clients = next(m for m in found if m.metric == "clients")
    assert clients.value == 2 and clients.dims == {"instance": "all"}


def test_parser_refuses_a_cut_short_output_and_a_client_that_could_not_connect():
    text = (DATA / "clients-native.txt").read_text()
    with pytest.raises(ParseError, match="elapsed"):
        scaleout_oltp.parse(text[: text.index("== elapsed")], "cut.txt")
    with pytest.raises(ParseError, match="unable to connect"):
        scaleout_oltp.parse((DATA / "clients-refused.txt").read_text(), "clients-refused.txt")
    with pytest.raises(ParseError, match="instance"):
        scaleout_oltp.parse("", "empty.txt")


def test_registered_with_default_envs_profiles_and_validated_parameters():
    assert "scaleout-oltp" in specs.names()
    plan = kitlib.plan("scaleout-oltp")
    assert list(plan.environments) == ["native", "docker-host-volume", "docker-nat-volume"]
    assert plan.params.instances == 2 and plan.params.placements == ["default", "pinned"]
    # small, and long enough for sysbench's per-second reports to show a steady state (kitlib.core.steady)
    assert plan.params.rows < 10_000 and 5 <= plan.params.seconds <= 10
    assert kitlib.plan("scaleout-oltp", profile="paper").params.instances == 16
    for bad in ({"placements": ["numa9"]}, {"instances": 0}, {"threads": []}, {"buffer_pool_mb": 1}):
        with pytest.raises(PlanError):
            kitlib.plan("scaleout-oltp", **bad)
    work = experiments.get("scaleout-oltp").workloads(kitlib.plan("scaleout-oltp", threads=[4, 8]))[0]
    assert work.sut_cores == 2 and work.ports_needed == 2
    assert [p["threads"] for p in work.points()] == [4, 8, 4, 8]


def test_bundle_script_starts_every_client_then_waits_for_all():
    script = bundle_script([["sysbench", "a"], ["sysbench", "b"]])
    assert script.index("sysbench b") < script.index("wait $pids") < script.index("== instance 0")
    assert "== elapsed" in script and 'rm -rf "$d"' in script


def test_claim_on_real_quick_runs_is_decided_per_configuration_on_three_trials():
    records = pd.read_csv(RECORDS)
    verdict = _claim().evaluate(records)
    assert verdict.status in ("reproduced", "not reproduced", "inconclusive") and verdict.n == 3
    # the post's Docker: bridged networking and host volumes, never host networking
    assert "docker-host-volume / native" not in verdict.reason and "docker-nat-volume / native" in verdict.reason
    assert "[0.95, 0.985]" in verdict.reason
    one = _claim().evaluate(records[records["repetition"] == 0])
    assert one.status == "inconclusive" and "at least 3" in one.reason
    pinned_only = _claim().evaluate(records[records["placement"] == "pinned"])
    assert pinned_only.status == "not testable here"  # the post's comparison is out of the box


def test_claim_never_pools_thread_counts_or_hosts():
    records = pd.read_csv(RECORDS)
    # the same runs again at 8 threads, Docker far slower there: that configuration alone decides against
    slower = records.assign(threads=8)
    slower.loc[slower["env"] != "native", "value"] *= 0.3
    verdict = _claim().evaluate(pd.concat([records, slower]))
    assert verdict.status == "not reproduced" and "2 thread counts" in verdict.reason
    from kitlib.analyse import claims

    two_hosts = pd.concat([records.assign(host="a"), records.assign(host="b", repetition=records["repetition"] + 3)])
    table = claims.evaluate_all(two_hosts)
    rows = table[table["claim"] == "scaleout_oltp_docker_adds_little"]
    assert sorted(rows["host"]) == ["a", "b"] and (rows["n"] == 3).all()


def test_claim_is_not_decided_where_the_sut_has_fewer_cpus_than_instances():
    records = pd.read_csv(RECORDS).assign(sut_cpu_count=1, placement_applicable=False)
    verdict = _claim().evaluate(records)
    assert verdict.status == "not testable here"
    assert "1 CPUs" in verdict.reason and "time-sharing, not scaling" in verdict.reason


def test_figure_table_normalises_to_native_with_the_claims_interval():
    from kitlib.analyse.figures.scaleout_oltp import normalised, scaleout_oltp_figure

    table = normalised(pd.read_csv(RECORDS))
    native, docker = table[table["env"] == "native"], table[table["env"] != "native"]
    assert (native["ratio"] == 1.0).all() and native["ci_low"].isna().all() and len(table) == 6
    assert (table["n"] == 3).all() and (docker["ci_low"] < docker["ratio"]).all()
    assert (docker["ratio"] < docker["ci_high"]).all()
    fig = scaleout_oltp_figure(pd.read_csv(RECORDS))
    assert fig.axes and fig.axes[0].get_ylabel().startswith("aggregate tps")
