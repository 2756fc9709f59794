"""Whether a records.csv is whole: the count and checksum its run wrote beside it.

A records.csv cut at a row boundary, or with one repetition's rows taken out, is still a valid CSV of
valid rows: nothing in it says that rows are missing, and a claim would be judged on fewer runs (or
become not testable) without a word. So when the store consolidates records.csv it writes beside it

    records.manifest.json   {records, records_by_repetition, bytes, sha256} of that records.csv

and a folder is read only where its records.csv holds as many records as the run wrote, each
repetition as many as it wrote (a file short of them is refused with the numbers); one holding as many
but other bytes was changed after the run, and is read with a notice saying so. Folders written before
the manifest existed have none and are read as before.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from kitlib.core.errors import KitError, Notice, RecordError

#: the sidecar beside records.csv
NAME = "records.manifest.json"


class RecordsChanged(Notice):
    """A records.csv that holds as many records as its run wrote, but not the same bytes."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def by_repetition(records: pd.DataFrame) -> dict[str, int]:
    """How many records each repetition holds, by the repetition's number as text (JSON keys)."""
    if records.empty or "repetition" not in records.columns:
        return {}
    counts = records["repetition"].astype(int).value_counts().sort_index()
    return {str(rep): int(n) for rep, n in counts.items()}


def document(path: Path, records: pd.DataFrame) -> dict[str, Any]:
    """What a run wrote into `path` (its records.csv as on disk now): the sidecar's content."""
    return {
        "file": Path(path).name,
        "records": len(records),
        "records_by_repetition": by_repetition(records),
        "bytes": Path(path).stat().st_size,
        "sha256": sha256_of(path),
    }


def text(path: Path, records: pd.DataFrame) -> str:
    """The sidecar as the store writes it (atomically, beside `path`)."""
    return json.dumps(document(path, records), indent=2, sort_keys=True) + "\n"


def check(path: Path, records: pd.DataFrame) -> None:
    """Refuse a records.csv short of (or beyond) the records its run wrote, naming both counts and the
    repetitions that differ; say so when it holds as many with other bytes. No sidecar: nothing to check."""
    sidecar = Path(path).with_name(NAME)
    if not sidecar.exists():
        return
    written = _read(sidecar)
    expected = written.get("records")
    if not isinstance(expected, int) or isinstance(expected, bool):
        raise KitError(f"{sidecar}: names no count of records ({expected!r}): it was changed outside the kit")
    if len(records) != expected or by_repetition(records) != written.get(
        "records_by_repetition", by_repetition(records)
    ):
        raise RecordError(_short(path, records, written, sidecar))
    found = sha256_of(path)
    if found != written.get("sha256"):
        warnings.warn(
            f"{path}: not the file its run wrote ({sidecar.name} gives sha256 {str(written.get('sha256'))[:12]}…, "
            f"the file's is {found[:12]}…), though it holds as many records ({expected}): it was changed after "
            "the run; read as it is now",
            RecordsChanged,
            stacklevel=4,
        )


def _read(sidecar: Path) -> dict[str, Any]:
    try:
        document = json.loads(sidecar.read_text())
    except OSError as exc:
        raise KitError(f"{sidecar}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise KitError(f"{sidecar}: not valid JSON ({exc}): it was cut or changed outside the kit") from None
    if not isinstance(document, dict):
        raise KitError(f"{sidecar}: holds {type(document).__name__}, not the JSON object the store writes")
    return document


def _short(path: Path, records: pd.DataFrame, written: Mapping[str, Any], sidecar: Path) -> str:
    """`…: holds 228 records, its run wrote 342 (records.manifest.json); repetition 2: 0 of 114 …`."""
    found, wrote = by_repetition(records), written.get("records_by_repetition") or {}
    reps = sorted(set(found) | set(wrote), key=lambda r: int(r) if str(r).isdigit() else -1)
    differ = [
        f"repetition {r}: {found.get(r, 0)} of {wrote.get(r, 0)}" for r in reps if found.get(r, 0) != wrote.get(r, 0)
    ]
    what = "cut short or rows taken out" if len(records) < written["records"] else "rows added or moved"
    return (
        f"{path}: holds {len(records)} records, its run wrote {written['records']} ({sidecar.name})"
        + (f"; {', '.join(differ)}" if differ else "")
        + f": {what} after the run, so its claims would be judged on other runs than were measured: the folder "
        "is refused (where it keeps its units/, running its plan again writes records.csv again from them)"
    )
