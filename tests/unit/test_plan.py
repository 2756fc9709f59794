"""Bad input is refused with one clear message before anything is started."""

from __future__ import annotations

import pytest

import kitlib
from kitlib.cli import main, parse_value
from kitlib.core.errors import PlanError
from kitlib.specs.labels import parse_label


def test_quick_plan_is_valid_and_stable():
    plan = kitlib.plan("redis", profile="quick")
    assert plan.environments == ("native", "docker-host-volume", "docker-nat-volume")
    assert plan.repetitions == 3
    assert plan.params.pipeline == 10
    assert plan.run_id == kitlib.plan("redis", profile="quick").run_id
    assert plan.run_id != kitlib.plan("redis", profile="quick", clients=[2]).run_id
    assert plan.run_id.startswith("quick-")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"environments": ["native", "docker-nat-vol"]},
            "unknown environment 'docker-nat-vol'; known environments: native",
        ),
        ({"clients": [0, 4]}, r"clients: .*between 1 and 10000, got \[0\]"),
        ({"clients": []}, r"clients: client counts must be between 1 and 10000, got \[\]"),
        ({"repetitions": -1}, "repetitions: must be at least 1, got -1"),
        ({"requests": "many"}, "requests: .*integer.*given: 'many'"),
        ({"pipeline": 0}, "pipeline: .*greater than or equal to 1"),
        ({"clientz": [1]}, r"unknown parameter\(s\) \['clientz'\]; known parameters: clients"),
        ({"profile": "fast"}, "profile: unknown profile 'fast'; known profiles: quick, standard, paper"),
        ({"environments": ["native", "native"]}, "listed twice"),
        ({"environments": ["docker-host-volume+quota"]}, "option 'quota' needs a value"),
        ({"environments": ["native+quota5000"]}, "native takes no options but"),
        ({"peer": "carrier-pigeon"}, "peer: "),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, message):
    with pytest.raises(PlanError, match=message):
        kitlib.plan("redis", **kwargs)


def test_unknown_experiment_lists_known_ones():
    with pytest.raises(PlanError, match="unknown experiment 'reddis'; known experiments: redis"):
        kitlib.plan("reddis")


def test_labels_carry_options():
    spec = parse_label("docker-host-volume+period10000+quota5000")
    assert (spec.kind, spec.network, spec.storage) == ("docker", "host", "volume")
    assert spec.options == {"quota": 5000, "period": 10000}
    assert parse_label("docker-nat-overlay").storage == "overlay"
    assert parse_label("qemu-tcg+qcow2").storage == "qcow2"
    with pytest.raises(PlanError, match="unknown option 'turbo'"):
        parse_label("docker-host-volume+turbo")


def test_cli_values_parse_like_papermill():
    assert parse_value("[1, 8, 32]") == [1, 8, 32]
    assert parse_value("10") == 10
    assert parse_value("'x'") == "x"
    assert parse_value("native") == "native"


def test_cli_run_refuses_bad_parameters_before_starting_anything(capsys, isolated_dirs):
    results, _ = isolated_dirs
    code = main(["run", "redis", "--env", "native", "-p", "clients", "[0]"])
    assert code == 2
    err = capsys.readouterr().err
    assert "clients" in err and "got [0]" in err
    assert not results.exists(), "nothing may be written for a refused plan"


def test_cli_run_refuses_unknown_environment(capsys, isolated_dirs):
    assert main(["run", "redis", "--env", "vmware"]) == 2
    assert "unknown environment 'vmware'" in capsys.readouterr().err
