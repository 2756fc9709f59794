"""Each experiment's schema is the one place its records are described: it must agree with what the
experiment records, with the figures kitlib draws and with the claims kitlib decides."""

from __future__ import annotations

import importlib

import pytest

from kitlib import specs
from kitlib.analyse import analysis, claims, figures
from kitlib.core import paths
from kitlib.measure import experiments


def test_every_claim_belongs_to_exactly_one_experiment():
    declared = [name for e in specs.names() for name in specs.schema(e).claims]
    assert sorted(declared) == sorted(c.name for c in claims.CLAIMS)
    assert len(declared) == len(set(declared))


@pytest.mark.parametrize("name", specs.names())
def test_its_figures_exist_and_its_closed_loops_record_their_n(name):
    experiment = experiments.get(name)
    schema = experiment.schema
    for spec in schema.figures:
        module, function = spec.draw.rsplit(".", 1)
        assert callable(getattr(importlib.import_module(f"kitlib.analyse.figures.{module}"), function)), spec
    plan = experiment.plan(environments=["native"], profile="quick")
    for workload in experiment.workloads(plan):
        for point in workload.points():
            recorded = workload.record_params(point)
            declared = schema.workload(workload.name)
            loop = declared.closed_loop
            if loop is not None and loop.outstanding:
                assert loop.outstanding in recorded, (workload.name, recorded)


def test_the_sample_draws_every_declared_figure_of_the_experiments_it_holds():
    import matplotlib.pyplot as plt

    records = analysis.load([paths.PROJECT_ROOT / "data" / "sample"])
    for name in sorted(set(records["experiment"])):
        drawn = figures.draw(records, name)
        part = records[records["experiment"] == name]
        wanted = [
            figures.file_name(s.name, host, own)
            for host, own in part.groupby("host")
            for s in specs.schema(name).figures
            if s.drawable(own)
        ]
        assert sorted(drawn) == sorted(wanted), name
        for figure in drawn.values():
            plt.close(figure)


def test_headline_rows_keep_redis_mix_and_leave_other_workloads_alone():
    import pandas as pd

    rows = pd.DataFrame(
        [
            {"experiment": "redis", "workload": "redis", "op": op, "metric": "throughput", "value": 1.0}
            for op in ("set", "get", "mix")
        ]
        + [{"experiment": "redis", "workload": "other", "op": "set", "metric": "throughput", "value": 2.0}]
    )
    kept = specs.schema("redis").headline_rows(rows)
    assert list(zip(kept["workload"], kept["op"], strict=True)) == [("redis", "mix"), ("other", "set")]
