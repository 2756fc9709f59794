"""data/sample as the tests read it: its machine and its runs found from their records, never named, so the
tests hold when the sample is measured again (a new machine, new run ids)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kitlib.core.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "sample"


def _measured(run: Path) -> set[str]:
    return set(pd.read_csv(run / "records.csv", usecols=["env"])["env"])


def run_with(experiment: str, env: str = "native") -> Path:
    """The one run folder of `experiment` whose records include `env` (`native`: the main set's run; `lxc`,
    `qemu-tcg`: the other environments' runs of the same machine)."""
    found = [p.parent for p in sorted((SAMPLE / experiment).glob("*/records.csv")) if env in _measured(p.parent)]
    if len(found) != 1:
        raise AssertionError(f"data/sample/{experiment} holds {len(found)} runs that measured {env}, not one")
    return found[0]


def main_host() -> str:
    """The machine that made most of the sample's records (data/sample is one machine's)."""
    hosts = pd.concat(pd.read_csv(p, usecols=["host"], dtype=str) for p in SAMPLE.glob("*/*/records.csv"))
    return str(hosts["host"].value_counts().idxmax())
