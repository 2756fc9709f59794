"""Reading records.csv files into one frame: every row checked, every record counted once, every
record naming the machine that made it.

A results folder is read back by people and scripts that did not write it: a row cut short, a value
that is not a number, a folder given twice (or copied, or linked), records naming a machine their
provenance does not describe would otherwise change n and the intervals without a word. So a bad row
is an error naming its file and line; a record already loaded (the same run, unit and metric, from a
copy or the same folder again, however its timestamps are written) is dropped once, with a message
naming both folders; a metric recorded in two units is refused, naming both; a folder whose records
name a host its provenance.json does not describe is refused, naming both; a folder that names no
machine at all is a host of its own, never pooled with another such folder.
"""

from __future__ import annotations

import csv
import math
import numbers
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from kitlib.core import hostfacts, hostid
from kitlib.core.ascii_numbers import is_count, is_decimal
from kitlib.core.errors import Notice, RecordError
from kitlib.core.records import BOOKKEEPING_COLUMNS, CORE_COLUMNS

#: columns no analysis can do without: a file lacking one is refused (the kit's files hold every
#: CORE_COLUMNS column; those present are checked too)
REQUIRED_COLUMNS = ("experiment", "env", "metric", "value", "unit")
#: columns that cannot be empty in a row (the value is checked apart: a finite number)
TEXT_COLUMNS = ("experiment", "workload", "env", "metric", "unit", "run_id")
#: columns read as text whatever they look like: a machine's hex id such as `0e41234567ab` or
#: `123456789012` would otherwise be read as the number 0.0 or 123456789012 and lose the machine it names
IDENTIFIER_COLUMNS = (*TEXT_COLUMNS, "host", "peer", "program_source", "tool_versions")
#: what a row is apart from its value, as written: a row repeated in one file is every column but these
NOT_IDENTITY = ("value", "source")
#: what a record is, however its file was written: its run, machine, environment, workload, repetition and
#: metric (and every column of its point, `point_columns`), and in a duet run its duet (the baseline runs
#: once in each duet of a repetition); the rest says when and how it was measured (start time, position,
#: disturbance, tools) or describes its program, and a copy re-saved by another program may write those
#: differently (a timestamp `…+00:00` as `…Z`)
IDENTITY_COLUMNS = ("experiment", "workload", "env", "metric", "run_id", "host", "repetition", "duet")
NOT_A_POINT = frozenset(BOOKKEEPING_COLUMNS | {"unit", "peer", "tool", "program_source", "source", "order"})


class DuplicateRecords(Notice):
    """Records loaded twice (the same folder given twice, or a copy or link of a run): counted once."""


class UnknownHost(Notice):
    """Records that name no machine, in a folder without provenance: a host of their own, named by folder."""


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


def described_hosts(sessions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The machines a folder's provenance describes, by the id their facts give now (not the id it
    recorded beside them: facts changed after the fact would otherwise keep vouching for that id)."""
    return {hostid.host_id(h): h for s in sessions for h in session_machines(s)}


def check_hosts(records: pd.DataFrame, sessions: list[dict[str, Any]], run_dir: Path) -> None:
    """Refuse a folder whose records name a host its provenance.json does not describe (another
    machine's id, an id typed by hand): pooled by that id, its records would join another machine's or
    make a machine of their own, and nothing in the folder says which machine really measured them."""
    described = described_hosts(sessions)
    if not described or records.empty or "host" not in records.columns:
        return
    named = records["host"].dropna().astype(str)
    strangers = sorted(set(named) - set(described))
    if not strangers:
        return
    counts = named.value_counts()
    found = ", ".join(f"{counts[h]} name host {h}" for h in strangers)
    raise RecordError(
        f"{run_dir}: its records and its provenance.json disagree: of its {len(records)} records {found}, "
        f"but provenance.json describes only {_machines(described)}; records that do not belong to the machine "
        "described beside them cannot be pooled by host: the folder is refused"
    )


def _machines(described: dict[str, dict[str, Any]]) -> str:
    """`host 21300648cfda (vm: AMD EPYC, 2 CPUs, 24 GiB, a VM guest)`, and for facts changed since the
    provenance recorded their id, the id it recorded."""
    parts = []
    for now, facts in sorted(described.items()):
        recorded = str(facts.get("host_id") or "")
        changed = (
            f"; it recorded the id {recorded} for them, which these facts no longer give"
            if recorded and recorded != now
            else ""
        )
        parts.append(f"host {now} ({hostid.describe_host(facts)}{changed})")
    return " and ".join(parts)


def name_unknown_hosts(frame: pd.DataFrame, undescribed: set[str]) -> pd.DataFrame:
    """Records naming no machine, from the folders (`source`) whose provenance describes none: each
    folder's own unknown host (`hostfacts.unknown_host`), so two such folders, maybe two machines, are
    never pooled as one; one line says which folders were read so."""
    if frame.empty or not undescribed or "source" not in frame.columns:
        return frame
    host = frame["host"].astype(object) if "host" in frame.columns else pd.Series(None, index=frame.index, dtype=object)
    hostless = host.isna() & frame["source"].astype(str).isin(undescribed)
    if not hostless.any():
        return frame
    names = {source: hostfacts.unknown_host(source) for source in frame.loc[hostless, "source"].astype(str).unique()}
    frame = frame.assign(host=host.mask(hostless, frame["source"].astype(str).map(names)))
    listed = "; ".join(f"{source} as {name}" for source, name in names.items())
    warnings.warn(
        f"{len(names)} folder(s) name no machine (no host in their records, no provenance.json): each is read as "
        f"a host of its own, never pooled with another: {listed}",
        UnknownHost,
        stacklevel=3,
    )
    return frame


# ---------------------------------------------------------------- counted once


def drop_duplicates(frame: pd.DataFrame) -> pd.DataFrame:
    """Each record once: a record loaded again from another folder (a copy, however re-saved) is
    dropped, with a message naming both folders; one repeated within a file likewise; the same record
    with another value is refused, naming both folders."""
    if frame.empty:
        return frame
    identity = record_identity(frame)
    source = frame["source"].astype(str) if "source" in frame.columns else pd.Series("", index=frame.index)
    first = pd.Series(source.values, index=identity.values).groupby(level=0).first()
    first_source = identity.map(first)
    again = source != first_source
    within = frame.duplicated(subset=[c for c in frame.columns if c not in NOT_IDENTITY], keep="first") & ~again
    repeated = again | within
    if not repeated.any():
        return frame
    _refuse_two_values(frame, identity, first_source, repeated)
    counts = pd.DataFrame({"again": source[repeated], "first": first_source[repeated]}).value_counts(sort=False)
    for (copy, original), count in counts.items():
        where = "repeated in its own records.csv" if copy == original else f"already loaded from {original}"
        runs = ", ".join(sorted(frame.loc[repeated & (source == copy), "run_id"].astype(str).unique()))
        warnings.warn(
            f"{copy}: {count} record(s) of run {runs} {where} (the same run, environment, workload, point, "
            "repetition and metric): counted once",
            DuplicateRecords,
            stacklevel=3,
        )
    return frame[~repeated].reset_index(drop=True)


def record_identity(frame: pd.DataFrame) -> pd.Series:
    """Each record's identity as one text (`IDENTITY_COLUMNS` and its point's columns), numbers
    compared as numbers (`4` and `4.0` are one point) and timestamps not at all."""
    columns = [c for c in IDENTITY_COLUMNS if c in frame.columns] + point_columns(frame)
    canonical = [frame[c].map(_canonical) for c in columns]
    return pd.Series(["\x1f".join(parts) for parts in zip(*canonical, strict=True)], index=frame.index, dtype=object)


def point_columns(frame: pd.DataFrame) -> list[str]:
    """The columns naming a record's point (its parameters and dimensions), sorted: every column that is
    not the record's identity, its value, bookkeeping or a description of its machine and program."""
    return sorted(c for c in frame.columns if c not in IDENTITY_COLUMNS and c not in NOT_A_POINT)


def _canonical(value: Any) -> str:
    """A cell as identity compares it: missing as one mark, every number as its float (a column read
    as integers in one file and as floats in another names the same point), text stripped."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "∅"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Real):
        return repr(float(value))
    return str(value).strip()


def _refuse_two_values(frame: pd.DataFrame, identity: pd.Series, first_source: pd.Series, repeated: pd.Series) -> None:
    """The first folder's values of each record read again; a copy holding another one is refused."""
    firsts = frame[~repeated]
    values = firsts["value"].groupby(identity[~repeated]).agg(lambda v: set(v))
    for index in frame.index[repeated]:
        row, known = frame.loc[index], values[identity[index]]
        if row["value"] in known:
            continue
        raise RecordError(
            f"record of run {row['run_id']} ({row['experiment']}/{row['workload']} {row['env']} "
            f"{row['metric']}, repetition {row['repetition']}) is {float(min(known))!r} in {first_source[index]} "
            f"and {float(row['value'])!r} in {row.get('source')}: the same run and unit cannot hold two values"
        )


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
