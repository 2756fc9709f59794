"""The scale-out experiment's load parser on real captured outputs, its plan and its proxy configs."""

from __future__ import annotations

from pathlib import Path

import pytest

import kitlib
from kitlib import specs
from kitlib.core.errors import ParseError, PlanError
from kitlib.measure.experiments import scaleout
from kitlib.measure.parsers import scaleout_load

DATA = Path(__file__).parents[1] / "data" / "scaleout"


def _by_metric(found):
    return {m.metric: m for m in found}


def test_baseline_output_gives_requests_over_wall_time():
    found = _by_metric(scaleout_load.parse((DATA / "baseline.txt").read_text(), "baseline.txt"))
    elapsed = found["duration"].value
    assert found["throughput"].value == pytest.approx(20_000 / elapsed)
    assert found["loaders"].value == 1
    assert found["throughput"].unit == "req/s" and found["latency_mean"].unit == "us"


@pytest.mark.parametrize("name", ["scaleout-twemproxy.txt", "scaleout-haproxy.txt"])
def test_scaleout_output_counts_every_loader_despite_proxy_warnings(name):
    text = (DATA / name).read_text()
    found = _by_metric(scaleout_load.parse(text, name))
    assert found["loaders"].value == 2
    assert found["throughput"].value == pytest.approx(40_000 / found["duration"].value)
    assert 0 < found["latency_mean"].value < 1e6


def test_cut_short_output_is_refused():
    text = (DATA / "baseline.txt").read_text()
    cut = text[: text.index("== elapsed")]
    with pytest.raises(ParseError, match="elapsed"):
        scaleout_load.parse(cut, "cut.txt")
    exited = (DATA / "haproxy-exited.txt").read_text()  # a proxy that could not start: no load ran
    with pytest.raises(ParseError, match="loader"):
        scaleout_load.parse(exited, "haproxy-exited.txt")


def test_registered_with_default_envs_and_profiles():
    assert "scaleout" in specs.names()
    plan = kitlib.plan("scaleout")
    assert list(plan.environments) == ["native", "docker-host-volume", "docker-nat-volume"]
    assert plan.params.instances == 2 and plan.params.placements == ["default", "pinned"]
    with pytest.raises(PlanError, match="placements"):
        kitlib.plan("scaleout", placements=["numa9"])
    with pytest.raises(PlanError):
        kitlib.plan("scaleout", instances=1)


def test_quick_points_are_time_bound_and_their_request_counts_split_no_series():
    """A fixed 20,000 requests per loader made a point last under a tenth of a second: quick sizes the
    baseline to `seconds` from a warm-up, and the counts that sizing picks differ from point to point."""
    import pandas as pd

    from kitlib.analyse.claims.core import configuration_columns
    from kitlib.measure.experiments import workloads_of

    plan = kitlib.plan("scaleout")
    assert plan.params.requests is None and plan.params.seconds >= 2
    (workload,) = workloads_of(plan)
    assert workload.estimate_seconds({}, None) > 2 * plan.params.seconds
    assert workloads_of(kitlib.plan("scaleout", requests=4000))[0].estimate_seconds({}, None) is None
    records = pd.read_csv(DATA / "records-quick-native-docker-nat.csv")
    records["scaleout_requests_per_loader"] = range(len(records))
    assert "requests_per_loader" not in configuration_columns(records)
    assert "scaleout_requests_per_loader" not in configuration_columns(records)


def test_proxy_configs_name_every_instance():
    targets = [("10.0.0.1", 7001), ("10.0.0.1", 7002)]
    twem = scaleout.proxy_config("twemproxy", 9000, targets)
    assert "distribution: ketama" in twem and "10.0.0.1:7002:1 s1" in twem
    ha = scaleout.proxy_config("haproxy", 9000, targets)
    assert "balance roundrobin" in ha and "server s1 10.0.0.1:7002" in ha
    assert "wait $pids" in scaleout.load_script(
        2, "127.0.0.1", 9000, 1000, scaleout.ScaleoutParams(instances=2, loaders=2, clients=1, seconds=1, keyspace=10)
    )


def _claim(name):
    from kitlib.analyse.claims import seeds

    return next(c for c in seeds.CLAIMS if c.name == name)


def test_claims_on_a_real_quick_run_need_more_trials_and_vm_is_not_testable():
    import pandas as pd

    records = pd.read_csv(DATA / "records-quick-native-docker-nat.csv")  # one trial of native and docker-nat
    below = _claim("scaleout_speedup_below_n").evaluate(records)
    assert below.status == "inconclusive" and "at least 3" in below.reason and 0 < below.effect < 1
    docker = _claim("scaleout_docker_adds_little").evaluate(records)
    assert docker.status == "inconclusive" and "docker-nat-volume / native" in docker.reason
    vm = _claim("scaleout_vm_fastest_out_of_box").evaluate(records)
    assert vm.status == "not testable here" and "KVM" in vm.reason
    assert _claim("scaleout_pinning_helps_native").evaluate(records[records["placement"] == "default"]).status == (
        "not testable here"
    )


def test_placement_claims_are_not_decided_where_instances_time_share_the_cpus(tmp_path):
    """Records of a 2-CPU host with 2 instances: the speedup measures time-sharing, so neither the
    speedup nor the pinning claim is decided, and the reason says why (from the records' provenance)."""
    import json

    import pandas as pd

    from kitlib.measure import provenance

    folder = tmp_path / "scaleout" / "quick-x"
    folder.mkdir(parents=True)
    host = provenance.collect_host()
    host["cpu"]["logical_cpus"] = 2
    (folder / "provenance.json").write_text(json.dumps({"format_version": 1, "sessions": [{"host": host}]}))
    records = pd.read_csv(DATA / "records-quick-native-docker-nat.csv")
    records = pd.concat([records, records.assign(repetition=records["repetition"] + 1)])
    records = pd.concat([records, records.assign(placement="pinned")]).assign(source=str(folder))
    for name in ("scaleout_speedup_below_n", "scaleout_pinning_helps_native"):
        verdict = _claim(name).evaluate(records)
        assert verdict.status == "not testable here", (name, verdict.reason)
        assert "has 2 CPUs for 2 instances" in verdict.reason and "time-sharing" in verdict.reason


def test_an_instance_without_a_pid_fails_its_point_with_what_redis_said():
    from kitlib.core.errors import CommandFailed
    from kitlib.measure.experiments.scaleout import server_pid

    assert server_pid("# Server\r\nredis_version:7.0.15\r\nprocess_id:4242\r\n", "x") == "4242"
    with pytest.raises(CommandFailed, match="no process_id line"):
        server_pid("# Server\r\nredis_version:7.0.15\r\n", "10.0.0.2:7000")


def test_one_container_per_instance_is_the_environment_not_a_configuration():
    """A real quick run (3 trials) where Docker's instances ran in 2 containers and native's in none:
    Docker against native is still compared, point by point, and decided by its interval."""
    import pandas as pd

    records = pd.read_csv(DATA / "records-quick-containers.csv")
    assert records.groupby("env")["containers"].unique().map(list).to_dict() == {
        "docker-host-volume": [2],
        "docker-nat-volume": [2],
        "native": [0],
    }
    docker = _claim("scaleout_docker_adds_little").evaluate(records)
    assert "share no configuration" not in docker.reason, docker.reason
    assert docker.status in ("reproduced", "not reproduced", "inconclusive") and docker.effect is not None
