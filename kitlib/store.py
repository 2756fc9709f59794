"""The results store: `results/<experiment>/<run_id>/`, written atomically, resumable.

    plan.json         the validated plan (and the store's format version)
    units/<key>.json  one measured point of one environment and repetition: status, records, commands
    raw/<key>.<name>.txt  the tool's raw output beside it
    records.csv       every valid record of the run (rebuilt from units/)
    failures.csv      units that failed, with their reason (never mixed into records.csv)
    provenance.json   host, engines, tools, versions, and every command line
    .lock             held (flock) by the process running the plan, so a second run of it refuses

A unit whose file says `ok` is done; running the same plan again does only what is missing
(never-run or failed units).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kitlib.errors import KitError
from kitlib.hostid import host_id
from kitlib.records import CORE_COLUMNS, Record, to_frame

FORMAT_VERSION = 1


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def unit_key(env: str, point: dict[str, Any], repetition: int, workload: str) -> str:
    parts = [workload, env] + [f"{k}={v}" for k, v in point.items()] + [f"r{repetition}"]
    return re.sub(r"[^A-Za-z0-9=.+_-]", "_", "__".join(parts))


def plan_differences(
    old: dict[str, Any], new: dict[str, Any], ignore: Iterable[str] = ()
) -> list[tuple[str, Any, Any]]:
    """(field, old value, new value) for every plan field that differs; `params.x` for parameters."""
    skip = set(ignore)
    found = []
    for name in sorted((set(old) | set(new)) - skip):
        a, b = old.get(name), new.get(name)
        if name == "params" and isinstance(a, dict) and isinstance(b, dict):
            found += [(f"params.{k}", a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b and not (isinstance(a, list | tuple) and isinstance(b, list | tuple) and list(a) == list(b)):
            found.append((name, a, b))
    return found


class RunStore:
    """One run's folder."""

    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def units_dir(self) -> Path:
        return self.root / "units"

    @property
    def raw_dir(self) -> Path:
        return self.root / "raw"

    # -- one run at a time -----------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock while a run writes into it; refuse if another process holds it.

        An flock, so the kernel releases it when its holder exits however it ends (even kill -9):
        a crashed run never leaves a stale lock behind."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                raise KitError(
                    f"another run of this plan is in progress in {self.root} (pid {holder}); "
                    "wait for it to finish or stop it, then run again (only missing points are measured)"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    # -- the plan --------------------------------------------------------------------------
    def write_plan(
        self,
        plan_json: dict[str, Any],
        ignore: Iterable[str] = ("ssh_key", "known_hosts", "preset", "sut_docker_socket"),
    ) -> None:
        """Record the plan; a folder holding another plan is refused, naming the fields that differ
        (fields in `ignore` do not change what is measured and may differ)."""
        existing = self.root / "plan.json"
        document = {"format_version": FORMAT_VERSION, "plan": plan_json}
        if existing.exists():
            old = json.loads(existing.read_text())
            if old.get("format_version", 0) > FORMAT_VERSION:
                raise KitError(f"{self.root} was written by a newer kitlib (format {old['format_version']})")
            differing = plan_differences(old.get("plan", {}), plan_json, ignore)
            if differing:
                raise KitError(
                    f"{self.root} holds the results of another plan; it differs in "
                    + "; ".join(f"{name}: {a!r} there, {b!r} now" for name, a, b in differing)
                    + ". Its results are not reused: choose another results folder or remove this one."
                )
            return
        atomic_write(existing, json.dumps(document, indent=2, sort_keys=True))

    # -- units -----------------------------------------------------------------------------
    def unit_status(self, key: str) -> str | None:
        path = self.units_dir / f"{key}.json"
        if not path.exists():
            return None
        return json.loads(path.read_text()).get("status")

    def save_raw(self, key: str, outputs: dict[str, str]) -> list[str]:
        names = []
        for name, text in outputs.items():
            path = self.raw_dir / f"{key}.{name}.txt"
            atomic_write(path, text)
            names.append(str(path.relative_to(self.root)))
        return names

    def save_ok(self, key: str, records: Iterable[Record], info: dict[str, Any]) -> None:
        rows = [r.as_row() for r in records]
        if not rows:
            raise KitError(f"{key}: a unit with no records cannot be saved as done")
        self._save_unit(key, {"status": "ok", "records": rows, **info})

    def save_attempt(
        self, key: str, attempt: int, reason: str, records: Iterable[Record], info: dict[str, Any]
    ) -> None:
        """Keep a discarded attempt of a unit (disturbed, measured again) beside it, with its reason:
        units/<key>.attempt<N>.json, status `discarded`, never part of records.csv."""
        rows = [r.as_row() for r in records]
        self._save_unit(f"{key}.attempt{attempt}", {"status": "discarded", "reason": reason, "records": rows, **info})

    def save_failed(self, key: str, reason: str, info: dict[str, Any]) -> None:
        self._save_unit(key, {"status": "failed", "reason": reason, **info})

    def _save_unit(self, key: str, document: dict[str, Any]) -> None:
        atomic_write(self.units_dir / f"{key}.json", json.dumps(document, indent=1, default=str))

    def units(self) -> list[dict[str, Any]]:
        if not self.units_dir.exists():
            return []
        return [json.loads(p.read_text()) | {"key": p.stem} for p in sorted(self.units_dir.glob("*.json"))]

    # -- consolidated views ----------------------------------------------------------------
    def consolidate(self):
        """Rebuild records.csv and failures.csv from the unit files; return the records frame."""
        import pandas as pd

        units = self.units()
        rows = [row for u in units if u["status"] == "ok" for row in u["records"]]
        frame = pd.DataFrame(rows) if rows else to_frame([])
        if rows:
            extra = [c for c in frame.columns if c not in CORE_COLUMNS]
            frame = frame[list(CORE_COLUMNS) + extra]
        atomic_write(self.root / "records.csv", frame.to_csv(index=False))
        failed = [
            {"unit": u["key"], "env": u.get("env"), "reason": u.get("reason")} for u in units if u["status"] == "failed"
        ]
        failures = self.root / "failures.csv"
        if failed:
            atomic_write(failures, pd.DataFrame(failed).to_csv(index=False))
        else:
            failures.unlink(missing_ok=True)
        return frame

    def failures(self):
        import pandas as pd

        path = self.root / "failures.csv"
        return pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["unit", "env", "reason"])

    # -- provenance ------------------------------------------------------------------------
    def append_provenance(self, session: dict[str, Any]) -> None:
        path = self.root / "provenance.json"
        document = json.loads(path.read_text()) if path.exists() else {"format_version": FORMAT_VERSION, "sessions": []}
        document["sessions"].append(session)
        atomic_write(path, json.dumps(document, indent=2, default=str))


def load_records(*roots: Path | str, experiment: str | None = None):
    """Every records.csv under the given folders (results/, data/sample/, …) as one frame. Record files
    older than the `host` column get it from their folder's provenance.json (the last session's host)."""
    import pandas as pd

    frames = []
    for root in roots:
        pattern = f"{experiment}/*/records.csv" if experiment else "*/*/records.csv"
        for path in sorted(Path(root).glob(pattern)):
            frame = pd.read_csv(path)
            if not frame.empty:
                frame["source"] = str(path.parent)
                if "host" not in frame.columns or frame["host"].isna().any():
                    known = recorded_host_id(path.parent)
                    if "host" not in frame.columns:
                        frame["host"] = known
                    else:
                        frame["host"] = frame["host"].fillna(known)
                frames.append(frame)
    if not frames:
        return to_frame([])
    return pd.concat(frames, ignore_index=True)


def recorded_host_id(run_dir: Path) -> str | None:
    """The host id of a run folder's provenance (its last session), None when it has none."""

    path = Path(run_dir) / "provenance.json"
    try:
        sessions = json.loads(path.read_text()).get("sessions") or []
    except (OSError, ValueError):
        return None
    if not sessions or not sessions[-1].get("host"):
        return None
    return host_id(sessions[-1]["host"])
