"""The web tier through its notebook: the application on native and in Docker (host network, host
volume, as the post ran it), Locust users on the peer, per-operation records from the steady window
only, the achieved mix near the target, the figure drawn, nothing left running."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kitlib.core import paths
from kitlib.notebooks import execute
from kitlib.specs.webtier import TABLE1_MIX

from ..conftest import leftovers

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-host-volume"]


def test_quick_notebook_run_measures_every_operation_over_the_steady_window(
    docker_client, root_netns, bench_image, isolated_dirs
):
    """The sweep of 10 and 30 users passes everywhere, so the peak-users search doubles to its limit of 60
    and stops there by itself; the run resumed afterwards measures nothing again."""
    import kitlib
    from kitlib.measure.run.plan_file import load_plan

    results, figures = isolated_dirs
    execute(
        paths.notebooks_root() / "experiments" / "webtier.ipynb",
        results / "webtier.ipynb",
        {
            "results_dir": str(results),
            "figures_dir": str(figures),
            "repetitions": 1,
            "environments": ENVS,
            "users": [10, 30],
            "data_users": 50,
            "ramp_up_s": 2,
            "steady_s": 8,
            "think_min_s": 0.2,
            "think_max_s": 0.5,
            "peak_max_users": 60,
        },
    )
    run_dir = next(results.glob("webtier/*/"))
    assert not (run_dir / "failures.csv").exists()
    records = pd.read_csv(run_dir / "records.csv")
    assert set(records["env"]) == set(ENVS) and set(records["users"]) == {10, 30, 60}
    # the machine's capacity probed around every point, as around Redis's
    assert records["capacity_pct"].notna().all() and (records["capacity_pct"] > 0).all()
    added = json.loads((run_dir / "extensions.json").read_text())["extensions"]
    assert sorted(e["environments"][0] for e in added) == sorted(ENVS)
    assert all(e["points"] == [{"users": 60}] and "peak-users search" in e["why"][0] for e in added)
    resumed = kitlib.run(load_plan(run_dir / "plan.json"), results_root=results)
    assert resumed.measured_units == 0 and len(resumed.records) == len(records)
    requests = records[(records["metric"] == "requests") & (records["operation"] != "Aggregated")]
    # every point served the frequent operations; their counts add up to the point's aggregate
    for (env, users), point in requests.groupby(["env", "users"]):
        frequent = set(point["operation"])
        assert {"HomePage", "TagSearch", "EventDetail", "Login"} <= frequent, (env, users, frequent)
        total = records[
            (records["metric"] == "requests")
            & (records["operation"] == "Aggregated")
            & (records["env"] == env)
            & (records["users"] == users)
        ]["value"]
        assert point["value"].sum() == total.sum()
    # the achieved mix is near Table 1's: TagSearch, the most frequent, within 10 points of its 33.37%
    shares = 100 * requests.groupby("operation")["value"].sum() / requests["value"].sum()
    assert abs(shares["TagSearch"] - TABLE1_MIX["TagSearch"]) < 10, shares.to_dict()
    p90 = records[records["metric"] == "latency_p90"]
    mean = records[records["metric"] == "latency_mean"]
    assert (p90["value"] > 0).all() and (mean["value"] > 0).all()
    errors = records[(records["metric"] == "errors") & (records["operation"] == "Aggregated")]
    assert (errors["value"] == 0).all(), errors
    thresholds = records.dropna(subset=["threshold_ms"]).groupby("operation")["threshold_ms"].first()
    assert thresholds["HomePage"] == 250 and thresholds["AddEvent"] == 500
    assert len(list(figures.glob("webtier-cloudstone-fig2-3-*.png"))) == 1
    assert leftovers(docker_client) == []


def test_two_tiers_put_the_database_in_a_second_container_behind_nat(
    docker_client, root_netns, bench_image, isolated_dirs
):
    """`tiers two` on a NAT label: MariaDB in a companion container, the web tier reaching it over TCP
    through the published port; every request served, the records saying where the database ran."""
    import kitlib

    results, _ = isolated_dirs
    plan = kitlib.plan(
        "webtier",
        environments=["docker-nat-volume"],
        repetitions=1,
        tiers="two",
        users=[10],
        data_users=50,
        ramp_up_s=2,
        steady_s=4,
        think_min_s=0.2,
        think_max_s=0.5,
        peak_max_users=0,
    )
    result = kitlib.run(plan, results_root=results)
    records = result.records
    assert len(result.failures) == 0
    assert set(records["db_apart"]) == {True} and set(records["tiers"]) == {"two"}
    aggregated = records[(records["operation"] == "Aggregated") & (records["metric"].isin(["requests", "errors"]))]
    assert aggregated.set_index("metric")["value"]["requests"] > 0
    assert aggregated.set_index("metric")["value"]["errors"] == 0
    assert leftovers(docker_client) == []


@pytest.mark.extended  # the web tier's run: its quick notebook
def test_two_instances_pinned_run_at_once_each_with_its_own_users(
    docker_client, root_netns, bench_image, isolated_dirs
):
    """Scaled out to two instances, pinned: on native two applications side by side, on a NAT label each in
    its own container; each instance's users at once, every record naming its instance, the placement and
    the containers; Figs. 4–5 drawn; nothing left running."""
    import kitlib
    from kitlib.analyse import figures

    results, figures_dir = isolated_dirs
    plan = kitlib.plan(
        "webtier",
        environments=["native", "docker-nat-volume"],
        repetitions=1,
        instances=2,
        placement="pinned",
        server_cores=2,
        users=[6],
        data_users=50,
        ramp_up_s=1,
        steady_s=4,
        think_min_s=0.2,
        think_max_s=0.5,
        peak_max_users=0,
    )
    result = kitlib.run(plan, results_root=results)
    assert len(result.failures) == 0, result.failures.to_dict("records")
    records = result.records
    requests = records[(records["operation"] == "Aggregated") & (records["metric"] == "requests")]
    assert sorted(zip(requests["env"], requests["instance"], strict=True)) == [
        ("docker-nat-volume", 0),
        ("docker-nat-volume", 1),
        ("native", 0),
        ("native", 1),
    ]
    assert (requests["value"] > 0).all()
    errors = records[(records["operation"] == "Aggregated") & (records["metric"] == "errors")]
    assert (errors["value"] == 0).all()
    assert set(records["placement"]) == {"pinned"} and set(records["instances"]) == {2}
    assert records.groupby("env")["containers"].first().to_dict() == {"docker-nat-volume": 2, "native": 0}
    written = figures.render(records, "webtier", figures_dir, close=True)
    assert any(name.startswith("webtier-cloudstone-fig4-5-") for name in written), written
    assert leftovers(docker_client) == []
