"""The scale-out notebook end to end: papermill, native and Docker NAT, the proxy on the peer."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

import kitlib
from kitlib.core import paths
from kitlib.notebooks import execute

from ..conftest import leftovers, plan_session

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.netns]

ENVS = ["native", "docker-nat-volume"]
TINY = {"requests": 4000, "keyspace": 2000, "clients": 4, "irq_pinning": True}


def veth_of(session: dict) -> str:
    """The host's end of the session's peer link, as the peer's `link` records it (`veth <host><-><peer>`)."""
    return session["peer"]["link"].split()[1].split("<->")[0]


def test_quick_scaleout_records_speedup_and_placement(docker_client, root_netns, bench_image, isolated_dirs):
    results, figures = isolated_dirs
    parameters = {"environments": ENVS, "repetitions": 1, "results_dir": str(results), "figures_dir": str(figures)}
    execute(
        paths.notebooks_root() / "experiments" / "scaleout.ipynb", results / "scaleout.ipynb", {**parameters, **TINY}
    )

    plan = kitlib.plan("scaleout", environments=ENVS, repetitions=1, **TINY)
    run_dir = results / "scaleout" / plan.run_id
    assert not (run_dir / "failures.csv").exists()
    records = pd.read_csv(run_dir / "records.csv")
    # the plan's own session: a point disturbed in every attempt adds a later one that measures it alone
    session = plan_session(run_dir)
    throughput = records[records["metric"] == "throughput"]
    assert set(throughput["config"]) == {"baseline", "scale-out"} and (throughput["value"] > 0).all()
    speedup = records[records["metric"] == "speedup"]
    assert len(speedup) == len(ENVS) * 2 and (speedup["value"] > 0).all()
    # each session links its own peer, so a point measured again names that session's virtual link
    sessions = json.loads((run_dir / "provenance.json").read_text())["sessions"]
    links = [veth_of(s) for s in sessions if s.get("peer")]
    assert set(records["placement"]) == {"default", "pinned"}
    assert set(records["irq_pinning"]) <= {
        f"not applicable: {link} is a virtual link without interrupts" for link in links
    }
    assert veth_of(session) in "".join(records["irq_pinning"]), "the plan's own session measured points"
    assert (records["instances"] == 2).all()
    # one container per instance on the Docker label (each behind its own published port), none on native
    assert records.groupby("env")["containers"].unique().map(list).to_dict() == {
        "docker-nat-volume": [2],
        "native": [0],
    }
    companions = session["environments"]["docker-nat-volume"]["companions"]
    assert len(companions) == 1 and companions[0]["container"].endswith("-i1")
    served = [c["argv"][0] for c in session["commands"] if c.get("service", "").startswith("redis-")]
    assert served.count("redis-server") == 4, "every instance's server command is in provenance"
    for name in ("scaleout-vroom-fig3-throughput", "scaleout-vroom-fig4-speedup"):
        (png,) = figures.glob(f"{name}-*.png")  # one file per host: this one
        assert png.stat().st_size > 10_000
    assert leftovers(docker_client) == [] and leftovers(docker_client, os.getpid()) == []
