"""Reading results folders: a run's plan, sessions and records, and every records.csv under some
folders as one frame. Only files: a notebook or course that reads `data/sample` needs nothing of the
measuring side (`kitlib.measure.store` writes what this reads)."""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from pathlib import Path
from typing import Any

from kitlib.core import paths
from kitlib.core.errors import KitError
from kitlib.core.records import to_frame
from kitlib.results import completeness, formats, record_files


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object of the store, or the kit's error naming the file (a file cut or overwritten by
    hand is never read as an empty one)."""
    try:
        document = json.loads(Path(path).read_text())
    except OSError as exc:
        raise KitError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise KitError(f"{path}: not valid JSON ({exc}): it was cut or changed outside the kit") from None
    if not isinstance(document, dict):
        raise KitError(f"{path}: holds {type(document).__name__}, not the JSON object the store writes")
    return document


def busy(folder: Path) -> bool:
    """Whether a process holds the run folder's lock now (a run writing into it: `RunStore.locked`)."""
    path = Path(folder) / ".lock"
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the descriptor releases a lock it took
    return False


def sessions(folder: Path) -> list[dict[str, Any]]:
    """The sessions a run folder's provenance.json records ([] without one)."""
    path = Path(folder) / "provenance.json"
    return list(read_json(path).get("sessions") or []) if path.exists() else []


def read_folder(folder: Path) -> formats.RunFolder:
    """One run folder as its files hold it (plan, provenance sessions, records), in its own format; a
    folder of a newer format than this kit's is refused, naming both, and a records.csv short of what its
    run wrote (`completeness`) with the numbers."""
    path = Path(folder) / "plan.json"
    document = read_json(path) if path.is_file() else {}
    records = record_files.read_records_csv(Path(folder) / "records.csv")
    completeness.check(Path(folder) / "records.csv", records)
    version = formats.version_of(document, records, Path(folder))
    plan = document.get("plan") if isinstance(document.get("plan"), dict) else None
    return formats.RunFolder(Path(folder), version, plan, sessions(Path(folder)), records)


def load_records(*roots: Path | str, experiment: str | None = None):
    """Every records.csv under the given folders (results/, data/sample/, one experiment's or one run's
    folder: `paths.records_files`) as one frame, each record once, each folder read in the current
    results format whatever its own (`kitlib.results.formats`: its host ids as `hostid.host_id` computes them
    now, its tools' versions named), with the order its plan ran in. A bad row, a record with two
    values, a metric in two units, records naming a host their folder's provenance does not describe are
    errors naming the file or folder; a run read from two folders is counted once, naming both; a folder
    naming no machine at all is a host of its own (`kitlib.results.record_files`)."""
    import pandas as pd

    unique_roots, again = record_files.same_folders(Path(root) for root in roots)
    found = [path.parent for root in unique_roots for path in paths.records_files(root, experiment)]
    folders, linked = record_files.same_folders(found)
    for repeated, first in again + linked:
        what = "given twice" if str(repeated) == str(first) else f"the same folder as {first}"
        warnings.warn(f"{repeated}: {what}: counted once", record_files.DuplicateRecords, stacklevel=2)
    frames, undescribed = [], set()
    for folder in folders:
        run = formats.upgrade(read_folder(folder))
        record_files.check_hosts(run.records, run.sessions, run.path)
        if not record_files.described_hosts(run.sessions):
            undescribed.add(str(folder))
        if not run.records.empty:
            frames.append(run.records.assign(source=str(folder), order=run.order))
    if not frames:
        return to_frame([])
    frame = record_files.drop_duplicates(pd.concat(frames, ignore_index=True))
    record_files.check_units(frame)
    return record_files.name_unknown_hosts(frame, undescribed)
