"""The results store: `results/<experiment>/<run_id>/`, written atomically, resumable.

    plan.json         the validated plan and the folder's results format (`kitlib.results.formats`)
    units/<key>.json  one measured point of one environment and repetition: status, records, commands
    raw/<key>.<name>.txt  the tool's raw output beside it
    records.csv       every valid record of the run (rebuilt from units/)
    records.manifest.json  how many records it holds (per repetition) and its sha256, written after it:
                      a records.csv short of them is refused (`kitlib.results.completeness`)
    failures.csv      units that failed, with their reason (never mixed into records.csv)
    provenance.json   host, engines, tools, versions, and every command line
    .lock             held (flock) by the process running the plan, so a second run of it refuses

A unit whose file says `ok` is done; running the same plan again does only what is missing
(never-run or failed units).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kitlib import results
from kitlib.core import sequential
from kitlib.core.errors import KitError
from kitlib.core.hostid import differences, host_id
from kitlib.core.records import CORE_COLUMNS, Record, to_frame
from kitlib.measure import provenance
from kitlib.measure.planning import NOT_IDENTITY
from kitlib.results import completeness, formats, read_json

FORMAT_VERSION = formats.FORMAT_VERSION


#: the mode of every file atomic_write writes, set on the file itself: reading the umask means setting
#: it, which changes it for every thread of the process while it is read
RESULT_FILE_MODE = 0o644
#: the prefix of atomic_write's temp files (`.<name>.<random>`): what `kit clean` removes of a killed writer
TEMP_PREFIX = "."


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and rename, so readers never see half a file; the file
    and then its folder are fsynced, so a record committed survives a power cut (a rename alone may
    reach the disk before the data it names)."""
    created = _make_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), RESULT_FILE_MODE)  # mkstemp makes 0600; results are for every reader
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for folder in [path.parent, *created]:
        fsync_dir(folder)


#: mkstemp's random part: 8 of these characters
_TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}$")
#: a temp file younger than this may be a live writer's (its rename a moment away)
TEMP_GRACE_S = 60.0


def stale_temp_files(results: Path, now: float | None = None) -> list[Path]:
    """atomic_write's temp files that a killed writer left under `results` (`.<name>.<8 random>`): in no
    run folder a process holds the lock of, and older than TEMP_GRACE_S."""
    import time

    now = time.time() if now is None else now
    found = []
    busy: dict[Path, bool] = {}
    for path in sorted(Path(results).rglob(".*")):
        if not _TEMP_NAME.match(path.name) or not path.is_file() or path.is_symlink():
            continue
        run = _run_folder(path, Path(results))
        if run is not None and busy.setdefault(run, RunStore(run).busy()):
            continue
        if now - path.lstat().st_mtime >= TEMP_GRACE_S:
            found.append(path)
    return found


def _run_folder(path: Path, results: Path) -> Path | None:
    """`results/<experiment>/<run_id>` holding `path`, None for files above the run folders."""
    parts = path.relative_to(results).parts
    return results / parts[0] / parts[1] if len(parts) > 2 else None


def _make_dirs(folder: Path) -> list[Path]:
    """mkdir -p; the parents of the folders it created (whose entries must reach the disk too)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        created.mkdir(exist_ok=True)
    return [m.parent for m in missing]


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (a rename, a new file) durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def has_records(unit: dict[str, Any]) -> bool:
    """Whether a unit document holds its records: an `ok` unit without them is not done."""
    records = unit.get("records")
    return isinstance(records, list) and bool(records) and all(isinstance(r, dict) for r in records)


def hardware_only_note(plan_host: str, here: dict[str, Any]) -> str:
    """Why a plan naming this hardware's id without an instance identity is refused too: a clone of
    this machine's image has that id, so the kit cannot tell whether this machine measured it."""
    bare = {key: value for key, value in here.items() if key != "instance"}
    if not here.get("instance") or plan_host != host_id(bare):
        return ""
    return (
        f" ({plan_host} is this hardware's id without an instance identity, which every clone of this "
        "machine's image shares: the kit cannot tell that this machine measured it)"
    )


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
        if name not in old and b in (None, [], (), {}):  # a field added since, left at its empty default
            continue
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
        fd = os.open(path, os.O_RDWR | os.O_CREAT, RESULT_FILE_MODE)
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

    def busy(self) -> bool:
        """Whether a process holds the folder's lock now (a run writing into it)."""
        return results.busy(self.root)

    # -- the plan --------------------------------------------------------------------------
    def write_plan(
        self,
        plan_json: dict[str, Any],
        ignore: Iterable[str] = NOT_IDENTITY,
    ) -> None:
        """Record the plan; a folder holding another plan is refused, naming the fields that differ
        (fields in `ignore` do not change what is measured and may differ). A plan that names its
        machine (`host`) runs only on that machine, into a folder measured on no other one."""
        existing = self.root / "plan.json"
        document = {"format_version": FORMAT_VERSION, "plan": plan_json}
        if plan_json.get("host"):
            self.refuse_other_machine(str(plan_json["host"]))
        if existing.exists():
            old = read_json(existing)
            formats.refuse_newer(old.get("format_version", formats.UNVERSIONED), self.root)
            differing = plan_differences(old.get("plan", {}), plan_json, ignore)
            if differing:
                raise KitError(
                    f"{self.root} holds the results of another plan; it differs in "
                    + "; ".join(f"{name}: {a!r} there, {b!r} now" for name, a, b in differing)
                    + ". Its results are not reused: choose another results folder or remove this one."
                )
            return
        atomic_write(existing, json.dumps(document, indent=2, sort_keys=True))

    def refuse_other_machine(self, plan_host: str) -> None:
        """Results are resumed only on the machine that measured them: a folder whose provenance
        records other hardware (or another machine-id), or a plan made on another machine, is refused,
        naming the difference."""
        here = provenance.collect_identity()
        for session in self.sessions():
            found = differences(session.get("host") or {}, here)
            if found:
                raise KitError(
                    f"{self.root} was measured on another machine ({'; '.join(found)}): its results are "
                    "not resumed here; choose another results folder or run the plan on that machine"
                )
        if plan_host != host_id(here):
            raise KitError(
                f"{self.root}: the plan was made on host {plan_host}, this is host {host_id(here)}"
                + (hardware_only_note(plan_host, here))
                + ": make the plan on this machine (its run_id then names this machine)"
            )

    # -- repetitions and points added to the plan's ------------------------------------------
    def extensions(self) -> list[dict[str, Any]]:
        """What was added to the plan's units, in the order it was added: repetitions of `--until-decided`
        ({repetition, environments, workloads, why}) and points of a search (the same with `points`, the
        point dicts measured in that repetition). A resumed run measures them as it does the plan's."""
        path = self.root / "extensions.json"
        return list(read_json(path).get("extensions") or []) if path.exists() else []

    def added_repetitions(self) -> list[dict[str, Any]]:
        """The extensions that are whole repetitions (not a search's points)."""
        return [e for e in self.extensions() if not e.get("points")]

    def add_extension(
        self,
        repetition: int,
        environments: list[str],
        workloads: list[str],
        why: list[str],
        points: list[dict[str, Any]] | None = None,
    ) -> None:
        """Record one more repetition of these environments and workloads, or with `points` these points
        in that repetition (written before they run, so an interrupted run resumes them)."""
        found = self.extensions()
        if not points and any(e["repetition"] == repetition for e in found if not e.get("points")):
            raise KitError(f"{self.root}: repetition {repetition} was already added")
        entry: dict[str, Any] = {"repetition": repetition, "environments": environments, "workloads": workloads}
        if points:
            entry["points"] = points
        entry["why"] = why
        document = {"format_version": FORMAT_VERSION, "extensions": [*found, entry]}
        atomic_write(self.root / "extensions.json", json.dumps(document, indent=2))

    # -- the looks of a run that may grow -------------------------------------------------------
    def end_looks(self, at: int, alpha: float, why: str) -> None:
        """Record that the run's looks end at `at` repetitions, its records' intervals then at 1 − `alpha`
        (`kitlib.core.sequential`: looks dropped for a reason that is not the data), and why."""
        document = {"format_version": FORMAT_VERSION, "ended_at": at, sequential.COLUMN: alpha, "why": why}
        atomic_write(self.root / "looks.json", json.dumps(document, indent=2))

    def looks_ended(self) -> dict[str, Any] | None:
        """{ended_at, ci_alpha, why} where the run's looks were ended before their schedule's last, else None."""
        path = self.root / "looks.json"
        return read_json(path) if path.exists() else None

    # -- units -----------------------------------------------------------------------------
    def pending(self, units: Iterable[Any]) -> list[Any]:
        """The units (anything with a `key`) not done yet: never run, failed, or without their records."""
        return [unit for unit in units if self.unit_status(unit.key) != "ok"]

    def unit_status(self, key: str) -> str | None:
        """`ok` (done: it holds its records), `failed`, or None (never run); a unit file that says `ok`
        without records is not done, so its point is measured again."""
        path = self.units_dir / f"{key}.json"
        if not path.exists():
            return None
        unit = read_json(path)
        status = unit.get("status")
        if status == "ok" and not has_records(unit):
            return None
        return status

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

    def attempts_of(self, key: str) -> list[dict[str, Any]]:
        """The unit's discarded attempts kept so far, in order ({attempt, file, reason}): a point measured
        again later in its run (`reopen`) goes on counting from them."""
        found = []
        for path in self.units_dir.glob(f"{glob.escape(key)}.attempt*.json"):
            number = path.name[len(key) + len(".attempt") : -len(".json")]
            if number.isdigit():
                unit = read_json(path)
                found.append({"attempt": int(number), "file": f"units/{path.name}", "reason": unit.get("reason")})
        return sorted(found, key=lambda a: a["attempt"])

    def reopen(self, key: str, reason: str) -> str:
        """Turn a done unit into a discarded attempt with `reason`, so its point is measured again: its
        file and raw outputs move to the next attempt's names (nothing is lost), records.csv drops it on
        the next consolidation. Returns the attempt's file."""
        unit = read_json(self.units_dir / f"{key}.json")
        if unit.get("status") != "ok":
            raise KitError(f"{key}: only a measured unit can be measured again (it is {unit.get('status')})")
        name = f"{key}.attempt{len(self.attempts_of(key)) + 1}"
        moved = []
        for raw in unit.get("raw_files") or []:
            old = self.root / raw
            new = old.with_name(name + old.name[len(key) :])
            if old.exists():
                os.replace(old, new)
            moved.append(str(new.relative_to(self.root)))
        unit.update(status="discarded", reason=reason, raw_files=moved)
        self._save_unit(name, unit)
        (self.units_dir / f"{key}.json").unlink()
        fsync_dir(self.units_dir)
        return f"units/{name}.json"

    def save_failed(self, key: str, reason: str, info: dict[str, Any]) -> None:
        self._save_unit(key, {"status": "failed", "reason": reason, **info})

    def _save_unit(self, key: str, document: dict[str, Any]) -> None:
        atomic_write(self.units_dir / f"{key}.json", json.dumps(document, indent=1, default=str))

    def units(self) -> list[dict[str, Any]]:
        if not self.units_dir.exists():
            return []
        return [read_json(p) | {"key": p.stem} for p in sorted(self.units_dir.glob("*.json"))]

    # -- consolidated views ----------------------------------------------------------------
    def consolidate(self):
        """Rebuild records.csv and failures.csv from the unit files, records.csv's count and checksum
        beside it (so a copy cut short is refused when read); return the records frame."""
        import pandas as pd

        units = self.units()
        rows = [row for u in units if u.get("status") == "ok" and has_records(u) for row in u["records"]]
        frame = pd.DataFrame(rows) if rows else to_frame([])
        if rows:
            extra = [c for c in frame.columns if c not in CORE_COLUMNS]
            frame = frame[list(CORE_COLUMNS) + extra]
        ended = self.looks_ended()
        if ended is not None and sequential.COLUMN in frame.columns:  # each unit keeps the level it was measured at
            frame[sequential.COLUMN] = ended[sequential.COLUMN]
        self._write_records(frame)
        failed = [
            {"unit": u["key"], "env": u.get("env"), "reason": u.get("reason")}
            for u in units
            if u.get("status") == "failed"
        ]
        failures = self.root / "failures.csv"
        if failed:
            atomic_write(failures, pd.DataFrame(failed).to_csv(index=False))
        else:
            failures.unlink(missing_ok=True)
        return frame

    def _write_records(self, frame) -> None:
        """records.csv, then what it holds (`completeness.NAME`), each atomically; the checksum is of the
        file as written. Between the two renames a reader finds them apart and refuses the folder, which
        the run's next consolidation (or its plan run again) makes whole."""
        path = self.root / "records.csv"
        atomic_write(path, frame.to_csv(index=False))
        atomic_write(self.root / completeness.NAME, completeness.text(path, frame))

    def failures(self):
        import pandas as pd

        path = self.root / "failures.csv"
        return pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["unit", "env", "reason"])

    # -- provenance ------------------------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        """The sessions provenance.json records ([] without one)."""
        return results.sessions(self.root)

    def append_provenance(self, session: dict[str, Any]) -> None:
        path = self.root / "provenance.json"
        document = read_json(path) if path.exists() else {"format_version": FORMAT_VERSION, "sessions": []}
        document["sessions"].append(session)
        atomic_write(path, json.dumps(document, indent=2, default=str))
