"""Every notebook and command parameter is read by one parser: the JSON text `papermill -p` passes,
the real list `-y` passes, one plain folder, and bad input as one error naming the parameter."""

from __future__ import annotations

from pathlib import Path

import pytest

from kitlib.analyse import analysis
from kitlib.core import parameters, paths
from kitlib.core.errors import KitError, ParameterError

SAMPLE = paths.PROJECT_ROOT / "data" / "sample"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ('["data/sample"]', ["data/sample"]),  # papermill -p results_dirs '["data/sample"]'
        ('["data/sample", "results"]', ["data/sample", "results"]),
        (["data/sample", "results"], ["data/sample", "results"]),  # papermill -y 'results_dirs: [...]'
        ("[data/sample, results]", ["data/sample", "results"]),  # a YAML flow list as text
        ("['data/sample']", ["data/sample"]),  # a Python literal
        ("data/sample", ["data/sample"]),  # one plain folder
        ('"data/sample"', ["data/sample"]),  # one folder as JSON text
        (Path("data/sample"), ["data/sample"]),
        ((Path("a"), "b"), ["a", "b"]),
        (None, []),
        ("", []),
        ("[]", []),
    ],
)
def test_a_list_parameter_in_every_form(given, expected):
    assert parameters.as_list("results_dirs", given) == expected


@pytest.mark.parametrize(
    "given",
    ['["data/sample"', "[data/sample", '{"a": 1}', {"a": 1}, 5, True, [None], [["a"]], [""], "[1, [2]"],
)
def test_bad_list_input_is_one_error_naming_the_parameter(given):
    with pytest.raises(ParameterError, match=r"^results_dirs: ") as caught:
        parameters.as_list("results_dirs", given)
    assert isinstance(caught.value, KitError)


def test_single_values_flags_and_numbers():
    assert parameters.as_text("summary_path", '"out/summary.md"') == "out/summary.md"
    assert parameters.as_text("summary_path", None) is None
    assert parameters.as_path("tables_dir", "tables") == paths.PROJECT_ROOT / "tables"
    assert parameters.as_path("tables_dir", "/tmp/t") == Path("/tmp/t")
    assert [parameters.as_flag("interactive", v) for v in (False, "False", "true", "no", 1)] == [
        False,
        False,
        True,
        False,
        True,
    ]
    assert parameters.as_number("tolerance", "0.2") == 0.2 and parameters.as_number("tolerance", 1) == 1.0
    for name, reader, bad in [
        ("summary_path", parameters.as_text, '["a", "b"]'),
        ("interactive", parameters.as_flag, "maybe"),
        ("tolerance", parameters.as_number, "fifteen"),
        ("tolerance", parameters.as_number, "NaN"),
        ("tolerance", parameters.as_number, True),
    ]:
        with pytest.raises(ParameterError, match=rf"^{name}: "):
            reader(name, bad)


def test_plain_values_keep_their_meaning():
    assert parameters.parse_value("[1, 8, 32]") == [1, 8, 32]
    assert parameters.parse_value("10") == 10
    assert parameters.parse_value("native") == "native"
    assert parameters.parse_value("docker-nat-volume") == "docker-nat-volume"
    assert parameters.parse_value(["native"]) == ["native"]


def test_results_dirs_as_papermill_passes_it_reach_the_records(tmp_path, monkeypatch):
    """The form that stopped the claims notebook (`'['` read as a folder) loads data/sample, and the
    summary's target is decided on it as on the list."""
    monkeypatch.setenv("KIT_RESULTS", str(tmp_path))
    text = '["data/sample"]'
    assert paths.resolve_results_dirs(text) == [SAMPLE]
    assert paths.summary_target(None, text) is None
    assert paths.summary_target('"s.md"', text) == paths.PROJECT_ROOT / "s.md"
    assert len(analysis.load(text)) == len(analysis.load(["data/sample"])) == len(analysis.load("data/sample"))
    assert set(analysis.load(text, '["native"]')["env"]) == {"native"}


def test_an_experiment_plan_reads_the_same_forms():
    from kitlib.measure import experiments

    redis = experiments.get("redis")
    as_text = redis.plan(environments='["native"]', clients="[1, 8]")
    as_list = redis.plan(environments=["native"], clients=[1, 8])
    assert as_text.environments == as_list.environments == ("native",)
    assert as_text.params.clients == as_list.params.clients == [1, 8]
    with pytest.raises(ParameterError, match=r"^clients: "):
        redis.plan(environments=["native"], clients="[1, 8")
