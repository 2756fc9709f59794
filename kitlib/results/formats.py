"""The results format: the version a run folder is written in, and the steps that read an older one.

Every run folder names its format in plan.json (`format_version`, beside the plan; provenance.json and
extensions.json repeat it). A folder of an older format is read through small ordered steps, one per
version (`STEPS`: 1→2, 2→3, 3→4), each a function of the folder as read (its plan, provenance sessions
and records), in memory: the files stay as they were measured. A folder of a newer format than this
kit's is refused, naming both versions.

    1  the first kits: records name no host, peer, position or start time; the plan names no order
       (every repetition of an environment ran in one block)
    2  records name their host (by the id of its machine-id alone: `hostid.legacy_host_id`), the peer,
       their position in the run's order and their start; the plan names its order and seed
    3  a host id is the machine-id with the hardware (`hostid.host_id`), so clones of one image stay apart
    4  every record names the versions of its experiment's tools (`kitlib.core.tool_versions`); provenance
       names the Docker engine's version `engine_version`, as a remote engine's facts do

Kits before version 4 wrote `format_version: 1` into every folder, whatever they wrote: such a folder
(or one without plan.json) is read as version 1 where a record names no host or the plan no order,
else as version 2 (the step to 3 keeps an id that is already current).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kitlib import specs
from kitlib.core import tool_versions
from kitlib.core.errors import KitError
from kitlib.core.hostid import host_id
from kitlib.results import record_files

FORMAT_VERSION = 4
#: what every kit before format 4 wrote, whatever the folder held (`version_of` reads the content)
UNVERSIONED = 1


@dataclass(frozen=True)
class RunFolder:
    """One run folder as read: its plan (None without plan.json), provenance sessions and records, in
    format `version`."""

    path: Path
    version: int
    plan: dict[str, Any] | None
    sessions: list[dict[str, Any]]
    records: pd.DataFrame

    @property
    def order(self) -> str | None:
        """The order its plan ran in; None for imported records or a folder without a plan."""
        if not self.plan or self.plan.get("imported") or not self.plan.get("order"):
            return None
        return str(self.plan["order"])


@dataclass(frozen=True)
class Step:
    """What changed from format `reads` to the next, and the function reading the older as the newer."""

    reads: int
    change: str
    apply: Callable[[RunFolder], RunFolder]


# ---------------------------------------------------------------- the steps


def name_the_host_and_the_order(run: RunFolder) -> RunFolder:
    """1 → 2: a record naming no host was measured by the folder's last session's host (its id as
    computed now, which step 2 → 3 keeps); a plan naming no order ran blocked, the only order then.
    Peer, position and start stay unknown: nothing recorded them."""
    plan = run.plan
    if _lacks_order(plan):
        plan = {**plan, "order": "blocked"}
    records = run.records
    last = run.sessions[-1].get("host") if run.sessions else None
    if last and not records.empty:
        records = records.copy()
        current = host_id(last)
        records["host"] = records["host"].where(records["host"].notna(), current) if "host" in records else current
    return dataclasses.replace(run, version=2, plan=plan, records=records)


def recompute_host_ids(run: RunFolder) -> RunFolder:
    """2 → 3: each record's host id as `hostid.host_id` computes it now from the folder's provenance
    (an id of the machine-id alone that two clones shared is split by the session each record ran in)."""
    records = record_files.current_host_ids(run.records, run.sessions, run.path)
    return dataclasses.replace(run, version=3, records=records)


def name_tool_versions_and_engine_version(run: RunFolder) -> RunFolder:
    """3 → 4: each record names the versions of its experiment's tools that its session's provenance
    recorded for its environment (where it does not already); the local engine's version in provenance
    is `engine_version`, not `engine`."""
    sessions = [_engine_version_key(session) for session in run.sessions]
    records = _with_tool_versions(run.records, sessions)
    return dataclasses.replace(run, version=4, sessions=sessions, records=records)


STEPS: tuple[Step, ...] = (
    Step(1, "records name their host, the plan its order", name_the_host_and_the_order),
    Step(2, "host ids are the machine-id with the hardware", recompute_host_ids),
    Step(
        3, "records name their tools' versions; provenance names engine_version", name_tool_versions_and_engine_version
    ),
)


# ---------------------------------------------------------------- reading


def version_of(plan_document: dict[str, Any], records: pd.DataFrame, where: Path) -> int:
    """The folder's format: the version its plan.json names, or for a folder of a kit before version 4
    (which wrote 1 whatever it held) the version its content shows. A newer one is refused."""
    recorded = plan_document.get("format_version", UNVERSIONED)
    if not isinstance(recorded, int) or isinstance(recorded, bool) or recorded < 1:
        raise KitError(f"{where}: plan.json names the format {recorded!r}, not a version number")
    refuse_newer(recorded, where)
    if recorded > UNVERSIONED:
        return recorded
    plan = plan_document.get("plan") if isinstance(plan_document.get("plan"), dict) else None
    hostless = not records.empty and ("host" not in records.columns or records["host"].isna().any())
    return 1 if hostless or _lacks_order(plan) else 2


def refuse_newer(version: int, where: Path) -> None:
    """A folder written by a newer kit is never read (or resumed) by this one: it would be misread."""
    if version > FORMAT_VERSION:
        raise KitError(
            f"{where} was written by a newer kitlib, in results format {version}; this one reads formats 1 to "
            f"{FORMAT_VERSION}: update kitlib to read it"
        )


def upgrade(run: RunFolder) -> RunFolder:
    """The folder read as the current format, through every step from its own version on, in order."""
    for step in STEPS:
        if run.version == step.reads:
            run = step.apply(run)
    if run.version != FORMAT_VERSION:
        raise KitError(f"{run.path}: no step reads format {run.version} as {FORMAT_VERSION}")
    return run


# ---------------------------------------------------------------- helpers of the steps


def _lacks_order(plan: dict[str, Any] | None) -> bool:
    return bool(plan) and not plan.get("imported") and not plan.get("order") and "repetitions" in plan


def _engine_version_key(session: dict[str, Any]) -> dict[str, Any]:
    host = session.get("host")
    docker = host.get("docker") if isinstance(host, dict) else None
    if not isinstance(docker, dict) or "engine" not in docker or "engine_version" in docker:
        return session
    renamed = {("engine_version" if k == "engine" else k): v for k, v in docker.items()}
    return {**session, "host": {**host, "docker": renamed}}


def _with_tool_versions(records: pd.DataFrame, sessions: list[dict[str, Any]]) -> pd.DataFrame:
    """Fill `tool_versions` where a record lacks it: the versions of the session it ran in (the last one
    started before it; the last one where it names no start) for its environment and workload."""
    if records.empty or not sessions or not {"experiment", "env"} <= set(records.columns):
        return records
    column = tool_versions.COLUMN
    missing = records[column].isna() if column in records.columns else pd.Series(True, index=records.index)
    if not missing.any():
        return records
    starts = [str(s.get("started") or "") for s in sessions]

    def session_of(started: object) -> int:
        earlier = [i for i, s in enumerate(starts) if s and s <= str(started)] if isinstance(started, str) else []
        return earlier[-1] if earlier else len(sessions) - 1

    rows = records.loc[missing]
    keys = pd.DataFrame(
        {
            "session": (rows["started"] if "started" in rows.columns else pd.Series(None, index=rows.index)).map(
                session_of
            ),
            "experiment": rows["experiment"].astype(str),
            "env": rows["env"].astype(str),
            "workload": rows["workload"].astype(str) if "workload" in rows.columns else "",
        },
        index=rows.index,
    )

    def text(key: tuple[int, str, str, str]) -> str | None:
        session, experiment, env, workload = key
        tools = specs.schema(experiment).tools_of(workload)
        return tool_versions.of_environment(sessions[session].get("tool_versions") or {}, env, *tools)

    found = {key: text(key) for key in keys.drop_duplicates().itertuples(index=False, name=None)}
    records = records.copy()
    records[column] = (records[column] if column in records.columns else pd.Series(None, index=records.index)).astype(
        object
    )
    records.loc[missing, column] = [found[key] for key in keys.itertuples(index=False, name=None)]
    return records
