"""Reading records.csv files into one frame: every row checked, every record counted once, every
record naming the machine that made it.

A results folder is read back by people and scripts that did not write it: a row cut short, a value
that is not a number, a folder given twice (or copied, or linked) would otherwise change n and the
intervals without a word. So a bad row is an error naming its file and line; a record already loaded
(the same run and unit, from a copy or the same folder again) is dropped once, with a message; a
metric recorded in two units is refused, naming both.
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from kitlib.core import hostid
from kitlib.core.ascii_numbers import is_count, is_decimal
from kitlib.core.errors import Notice, RecordError
from kitlib.core.records import CORE_COLUMNS

#: columns no analysis can do without: a file lacking one is refused (the kit's files hold every
#: CORE_COLUMNS column; those present are checked too)
REQUIRED_COLUMNS = ("experiment", "env", "metric", "value", "unit")
#: columns that cannot be empty in a row (the value is checked apart: a finite number)
TEXT_COLUMNS = ("experiment", "workload", "env", "metric", "unit", "run_id")
#: columns read as text whatever they look like: a machine's hex id such as `0e41234567ab` or
#: `123456789012` would otherwise be read as the number 0.0 or 123456789012 and lose the machine it names
IDENTIFIER_COLUMNS = (*TEXT_COLUMNS, "host", "peer", "program_source", "tool_versions")
#: what identifies a record apart from its value: every column but these (the run, the unit's
#: environment, workload, point and repetition, the metric and its dimensions, where and when it ran)
NOT_IDENTITY = ("value", "source")


class DuplicateRecords(Notice):
    """Records loaded twice (the same folder given twice, or a copy or link of a run): counted once."""


def read_records_csv(path: Path) -> pd.DataFrame:
    """One records.csv, every row checked first (see `check_rows`), as a frame."""
    check_rows(path)
    return pd.read_csv(path, dtype=dict.fromkeys(IDENTIFIER_COLUMNS, str))


def check_rows(path: Path) -> None:
    """Refuse the file at its first bad row, naming file and line: a header without the core columns,
    a row with more or fewer fields than the header, a value that is not a finite number of ASCII
    digits (`1_000`, `٣٣`), an empty core column, a repetition that is not a whole number."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise RecordError(f"{path}: empty, without even its header line (a records file cut short)")
            lacking = [c for c in REQUIRED_COLUMNS if c not in header]
            if lacking:
                raise RecordError(f"{path}: line 1: the header lacks the column(s) {', '.join(lacking)}")
            where = {name: header.index(name) for name in CORE_COLUMNS if name in header}
            for row in reader:
                _check_row(row, len(header), where, f"{path}: line {reader.line_num}")
    except OSError as exc:
        raise RecordError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise RecordError(f"{path}: not a CSV file of records ({exc})") from None


def _check_row(row: list[str], width: int, where: dict[str, int], place: str) -> None:
    if len(row) != width:
        raise RecordError(f"{place}: {len(row)} field(s), the header has {width}")
    text = row[where["value"]].strip()
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise RecordError(f"{place}: the value {text!r} is not a finite number")
    if not is_decimal(text):
        # float() would take `1_000` and `٣٣`, which pandas then reads as text: the kit writes neither
        raise RecordError(f"{place}: the value {text!r} is not a number of ASCII digits")
    if not math.isfinite(float(text)):
        raise RecordError(f"{place}: the value {text!r} is not a finite number")
    for name in TEXT_COLUMNS:
        if name in where and not row[where[name]].strip():
            raise RecordError(f"{place}: no {name}")
    repetition = row[where["repetition"]].strip() if "repetition" in where else "0"
    if not is_count(repetition):
        raise RecordError(f"{place}: the repetition {repetition!r} is not a whole number")


# ---------------------------------------------------------------- hosts


def session_machines(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The machines a provenance session ran on: its host and the remote systems under test it reached."""
    return [h for h in [session.get("host"), *(session.get("sut_hosts") or {}).values()] if isinstance(h, dict)]


def current_host_ids(frame: pd.DataFrame, sessions: list[dict[str, Any]], run_dir: Path) -> pd.DataFrame:
    """The `host` column as `hostid.host_id` computes it now from the folder's provenance: records of
    older kits carry ids of the machine-id alone (so two clones of one image shared one); an id that is
    already current stays. The files themselves are never rewritten (`kitlib.results.formats`, step 2 → 3)."""
    by_session = [(s, h) for s in sessions for h in session_machines(s)]
    if not by_session or "host" not in frame.columns:
        return frame
    current: dict[str, set[str]] = {}
    for _, host in by_session:
        new = hostid.host_id(host)
        for old in hostid.recorded_ids(host) | {new}:
            current.setdefault(old, set()).add(new)
    frame = frame.copy()
    ids = frame["host"].astype(object)
    for old in ids.dropna().unique():
        found = current.get(str(old), set())
        if len(found) == 1:
            ids = ids.mask(ids == old, next(iter(found)))
        elif len(found) > 1:
            ids = ids.mask(ids == old, _by_session(frame[ids == old], by_session, str(old), run_dir))
    frame["host"] = ids
    return frame


def _by_session(rows: pd.DataFrame, by_session: list[tuple[dict, dict]], old: str, run_dir: Path) -> pd.Series:
    """Records whose old id two machines shared (clones resumed one folder): each gets the id of the
    session it was measured in, the last one started before the record."""
    if "started" not in rows.columns or rows["started"].isna().any():
        machines = ", ".join(sorted({hostid.host_id(h) for _, h in by_session if old in hostid.recorded_ids(h)}))
        raise RecordError(
            f"{run_dir}: host {old} stands for machines that differ ({machines}) and its records do not "
            "say when they were measured: they cannot be told apart"
        )
    starts = sorted(
        (str(s.get("started") or ""), hostid.host_id(h)) for s, h in by_session if old in hostid.recorded_ids(h)
    )

    def session_of(started: str) -> str:
        earlier = [new for begun, new in starts if begun <= started]
        return earlier[-1] if earlier else starts[0][1]

    return rows["started"].astype(str).map(session_of)


# ---------------------------------------------------------------- counted once


def drop_duplicates(frame: pd.DataFrame) -> pd.DataFrame:
    """Each record once: a record is its run and unit (every column but value and source); one loaded
    again from another folder (a copy, a link, the same folder twice) is dropped with a message; the
    same record with another value is refused, naming both folders."""
    if frame.empty:
        return frame
    key = [c for c in frame.columns if c not in NOT_IDENTITY]
    repeated = frame.duplicated(subset=key, keep="first")
    if not repeated.any():
        return frame
    firsts = frame[~repeated & frame.duplicated(subset=key, keep=False)]
    first_of = {_key(row, key): (row["value"], row.get("source")) for _, row in firsts.iterrows()}
    dropped: dict[tuple[str, str], int] = {}
    for _, row in frame[repeated].iterrows():
        value, source = first_of[_key(row, key)]
        if value != row["value"]:
            raise RecordError(
                f"record of run {row['run_id']} ({row['experiment']}/{row['workload']} {row['env']} "
                f"{row['metric']}, repetition {row['repetition']}) is {value!r} in {source} and "
                f"{row['value']!r} in {row.get('source')}: the same run and unit cannot hold two values"
            )
        pair = (str(row.get("source")), str(source))
        dropped[pair] = dropped.get(pair, 0) + 1
    for (again, first), count in dropped.items():
        where = "the same folder given again" if again == first else f"already loaded from {first}"
        warnings.warn(
            f"{again}: {count} record(s) {where} (the same run and unit): counted once", DuplicateRecords, stacklevel=3
        )
    return frame[~repeated].reset_index(drop=True)


def _key(row: pd.Series, key: list[str]) -> tuple:
    return tuple("∅" if pd.isna(row[c]) else str(row[c]) for c in key)


# ---------------------------------------------------------------- one unit per metric


def check_units(frame: pd.DataFrame) -> None:
    """One unit per experiment, workload and metric across everything loaded, or refused naming both
    units and where each was found (two units would be dropped by one comparison, pooled by another)."""
    if frame.empty or "unit" not in frame.columns:
        return
    by = [c for c in ("experiment", "workload", "metric") if c in frame.columns]
    counts = frame.groupby(by, sort=True)["unit"].nunique()
    for names in counts[counts > 1].index:
        rows = frame[(frame[by] == pd.Series(names, index=by)).all(axis=1)]
        seen = rows.drop_duplicates("unit")
        found = "; ".join(f"{r['unit']!r} in {r.get('source', '?')}" for _, r in seen.head(2).iterrows())
        raise RecordError(f"{' '.join(map(str, names))} is recorded in two units: {found}")


def same_folders(folders: Iterable[Path]) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """The run folders once each (the same folder reached twice, through a link too); the ones skipped,
    with the folder they repeat."""
    kept: dict[Path, Path] = {}
    skipped = []
    for folder in folders:
        real = folder.resolve()
        if real in kept:
            skipped.append((folder, kept[real]))
        else:
            kept[real] = folder
    return list(kept.values()), skipped
