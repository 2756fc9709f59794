"""A run of data/sample copied as if another machine had made it: its provenance names another CPU and no
hypervisor, its records carry that machine's host id and a run id of their own, and its values are
doubled so that pooling the two would show. Tests of "one host per picture" need a second machine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from kitlib.core import hostid

OTHER_CPU = "Intel Xeon Gold 6230"


def copy_as_another_machine(run: Path, copy: Path) -> str:
    """Copy `run` to `copy` as another machine's; returns that machine's host id."""
    shutil.copytree(run, copy)
    provenance = json.loads((copy / "provenance.json").read_text())
    for session in provenance["sessions"]:
        session["host"]["cpu"]["model"] = OTHER_CPU
        session["host"]["cpu"]["virtualization_flags"] = []
        session["host"]["os"]["hostname"] = "other"
    (copy / "provenance.json").write_text(json.dumps(provenance))
    host = hostid.host_id(provenance["sessions"][-1]["host"])
    records = pd.read_csv(copy / "records.csv")
    records["value"] = records["value"] * 2
    records["host"] = host
    records["run_id"] = copy.name
    records.to_csv(copy / "records.csv", index=False)
    return host
