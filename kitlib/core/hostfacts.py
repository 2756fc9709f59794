"""Facts about the machine that made a set of records, read from the runs' provenance only.

Claims are decided on records, never on the machine that analyses them: the host id, its NUMA node
count, whether it is itself a VM guest and Docker's storage driver come from each run folder's
provenance.json (the `source` column of the records names that folder).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from kitlib.core import hostid

UNKNOWN_HOST = "unknown"
#: how the host of a folder that names no machine begins (`unknown_host`)
UNKNOWN_PREFIX = "unknown-"


def unknown_host(folder: Path | str) -> str:
    """The host of records that name no machine in a folder without provenance: `unknown-<folder>-<6 hex
    of its path>`, one per folder, so two such folders (maybe two machines) are never pooled as one and
    the name stays fit for a figure's file name."""
    path = Path(folder).resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "_", path.name) or "folder"
    return f"{UNKNOWN_PREFIX}{name}-{hashlib.sha256(str(path).encode()).hexdigest()[:6]}"


@lru_cache(maxsize=256)
def _sessions(folder: str) -> tuple[dict[str, Any], ...]:
    path = Path(folder) / "provenance.json"
    try:
        sessions = json.loads(path.read_text()).get("sessions") or []
    except (OSError, ValueError):
        return ()
    return tuple(s for s in sessions if isinstance(s, dict))


def _session(folder: str) -> dict[str, Any]:
    sessions = _sessions(folder)
    return sessions[-1] if sessions else {}


def facts_of(df: pd.DataFrame, host: str) -> dict[str, Any]:
    """The provenance facts of the machine whose id is `host` (the local host or a remote system under
    test of any session of the records' run folders); {} when no folder describes it."""
    if "source" not in df.columns:
        return {}
    for source in df["source"].dropna().astype(str).unique():
        for session in _sessions(source):
            for facts in [session.get("host"), *(session.get("sut_hosts") or {}).values()]:
                if facts and (hostid.host_id(facts) == host or host in hostid.recorded_ids(facts)):
                    return facts
    return {}


def host_facts(folder: str) -> dict[str, Any]:
    """The `host` dict of a run folder's last session ({} without provenance)."""
    return _session(str(folder)).get("host") or {}


def with_host(df: pd.DataFrame) -> pd.DataFrame:
    """Records with a `host` column: kept where records carry it, else derived per run folder."""
    df = df.copy()
    derived = df["source"].map(lambda s: _host_of(s)) if "source" in df.columns else UNKNOWN_HOST
    if "host" in df.columns:
        df["host"] = df["host"].where(df["host"].notna() & (df["host"].astype(str) != ""), derived)
    else:
        df["host"] = derived
    return df


def _host_of(source: object) -> str:
    if not isinstance(source, str):
        return UNKNOWN_HOST
    facts = host_facts(source)
    return hostid.host_id(facts) if facts else unknown_host(source)


def _facts_of_host(df: pd.DataFrame) -> list[dict[str, Any]]:
    if "source" not in df.columns:
        return []
    return [f for f in (host_facts(s) for s in df["source"].dropna().astype(str).unique()) if f]


def numa_nodes(df: pd.DataFrame) -> int | None:
    """NUMA nodes of the host that made these records (the largest count its runs recorded), None if unknown."""
    counts = [hostid.numa_nodes(f) for f in _facts_of_host(df)]
    return max(counts) if counts else None


def logical_cpus(df: pd.DataFrame) -> int | None:
    """Logical CPUs of the host that made these records (the fewest its runs recorded), None if unknown."""
    counts = [f.get("cpu", {}).get("logical_cpus") for f in _facts_of_host(df)]
    counts = [c for c in counts if isinstance(c, int)]
    return min(counts) if counts else None


def is_vm_guest(df: pd.DataFrame) -> bool:
    """Whether provenance says the records' host is itself a virtual machine."""
    return any(hostid.is_virtual_machine(f) for f in _facts_of_host(df))


def storage_drivers(df: pd.DataFrame) -> set[str]:
    """Docker storage drivers the runs recorded (e.g. overlay2)."""
    found = set()
    if "source" not in df.columns:
        return found
    for source in df["source"].dropna().astype(str).unique():
        session = _session(source)
        for docker in (session.get("docker"), (session.get("host") or {}).get("docker")):
            if isinstance(docker, dict) and docker.get("storage_driver"):
                found.add(str(docker["storage_driver"]))
    return found
