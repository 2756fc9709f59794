"""Points every attempt of which was disturbed are left out of a verdict, said in its evidence
(kitlib.analyse.claims.disturbance)."""

from __future__ import annotations

import pandas as pd

from kitlib.analyse import claims
from kitlib.results import load_records

from ..support import sample
from .test_claims import runs


def _stream(docker_last: float, disturbed_last: bool) -> pd.DataFrame:
    """STREAM's four kernels, 3 runs a side, native and Docker at 57 GB/s, except Docker's last run at
    `docker_last` (the memory run of a reproduce: the guest at 100 GB/s for its last repetition)."""
    rows = []
    for kernel in ("Copy", "Scale", "Add", "Triad"):
        dims = {"workload": "stream", "variant": "System", "kernel": kernel, "host": "h1"}
        for env in ("native", "docker-host-volume"):
            for row in runs("memory", "bandwidth", env, 57.0, n=4, cv=0.002, **dims):
                row["disturbed"] = False
                rows.append(row)
        rows.append(
            {
                **rows[-1],
                "env": "docker-host-volume",
                "value": docker_last,
                "repetition": 4,
                "disturbed": disturbed_last,
            }
        )
    return pd.DataFrame(rows)


def _verdict(records: pd.DataFrame, name: str):
    table = claims.evaluate_all(records)
    return table[table["claim"] == name].iloc[0]


def test_a_point_on_a_changed_machine_decides_nothing_once_the_rule_calls_it_disturbed():
    kept = _verdict(_stream(100.0, disturbed_last=False), "docker_near_native_stream")
    assert kept["status"] == "inconclusive" and "left out" not in kept["reason"]
    left = _verdict(_stream(100.0, disturbed_last=True), "docker_near_native_stream")
    assert left["status"] == "reproduced", left["reason"]  # one point: its four kernels came from one process
    assert left["n"] == 4
    assert left["reason"].endswith(
        "1 point(s) left out, every attempt of theirs disturbed (docker-host-volume × 1; the `disturbed` column "
        "and units/*.attempt*.json say why)"
    )


def test_a_claim_whose_only_points_were_disturbed_says_so_and_others_say_nothing():
    records = _stream(57.0, disturbed_last=True)
    records["disturbed"] = records["env"] == "docker-host-volume"
    only = _verdict(records, "docker_near_native_stream")
    assert only["status"] == "not testable here"
    assert "5 point(s) left out" in only["reason"]  # each of Docker's 5 runs
    kvm = _verdict(records, "kvm_near_native_stream")  # no KVM record at all: nothing of it was left out
    assert kvm["status"] == "not testable here" and "left out" not in kvm["reason"]


def test_the_sample_s_disturbed_points_are_named_where_a_verdict_rests_on_them():
    records = load_records(sample.SAMPLE / "cpu")
    linpack = _verdict(records, "docker_near_native_linpack")
    assert "1 point(s) left out, every attempt of theirs disturbed (native × 1" in linpack["reason"]
    assert linpack["n"] == 3  # native's 4 Linpack runs but the disturbed one (Docker has 4)
    # the string form of a CSV read without the kit's dtypes leaves the same points out
    as_text = records.assign(disturbed=records["disturbed"].astype(str))
    assert _verdict(as_text, "docker_near_native_linpack")["reason"] == linpack["reason"]
