"""Records cross-checked on load, on real run folders of data/sample copied and then changed: rows that
name a host their provenance.json does not describe are refused; folders naming no machine are never
pooled as one host; a records.csv short of the count its run wrote beside it is refused with the
numbers; a run read from two folders (a copy re-saved with other timestamps) is counted once, naming
both."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from kitlib import cli
from kitlib.core.errors import RecordError
from kitlib.core.records import Measurement, place
from kitlib.measure.store import RunStore
from kitlib.results import completeness, load_records, record_files

from ..support import sample

SAMPLE = sample.SAMPLE
NET = sample.run_with("net", "native")
LATENCY = sample.run_with("latency", "native")


def _copy(run: Path, root: Path, run_id: str | None = None) -> Path:
    """The run folder copied under `root/<experiment>/`, as another run `run_id` where one is given (its
    records, and its sidecar as that run's store would have written it)."""
    copy = root / run.parent.name / (run_id or run.name)
    shutil.copytree(run, copy)
    if run_id:
        records = copy / "records.csv"
        records.write_text(records.read_text().replace(run.name, run_id))
        _rewrite_sidecar(copy)
    return copy


def _rewrite_sidecar(folder: Path) -> None:
    records = folder / "records.csv"
    (folder / completeness.NAME).write_text(completeness.text(records, record_files.read_records_csv(records)))


def _rows(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "records.csv", dtype=str, keep_default_na=False)


def _claims(capsys, *folders: Path) -> tuple[int, pd.DataFrame | None, str]:
    code = cli.main(["claims", *map(str, folders)])
    out, err = capsys.readouterr()
    return code, pd.read_csv(io.StringIO(out)) if code == 0 else None, err


# ---------------------------------------------------------------- rows against provenance


def test_rows_carrying_the_samples_id_beside_another_machines_provenance_are_refused(tmp_path):
    """Provenance says an Intel Xeon with 224 CPUs; the rows carry the sample's id: before, pooled with
    the sample (n 3 → 6)."""
    xeon = _copy(NET, tmp_path / "xeon", "quick-0a0a0a0a0a")
    document = json.loads((xeon / "provenance.json").read_text())
    for session in document["sessions"]:
        session["host"]["cpu"].update(model="Intel(R) Xeon(R) Platinum 8480+", logical_cpus=224)
    (xeon / "provenance.json").write_text(json.dumps(document))
    host = sample.main_host()
    with pytest.raises(RecordError) as refused:
        load_records(SAMPLE / "net", tmp_path / "xeon")
    message = str(refused.value)
    assert message.startswith(f"{xeon}: its records and its provenance.json disagree")
    assert f"342 name host {host}" in message and "Intel(R) Xeon(R) Platinum 8480+, 224 CPUs" in message
    assert f"it recorded the id {host} for them, which these facts no longer give" in message
    assert "the folder is refused" in message
    print(message)


def test_rows_set_to_an_id_no_machine_has_are_refused(tmp_path):
    """Rows set to `deadbeef0000`: before, a new host without a word."""
    forged = _copy(NET, tmp_path / "forged", "quick-0b0b0b0b0b")
    rows = _rows(forged).assign(host="deadbeef0000")
    rows.to_csv(forged / "records.csv", index=False)
    with pytest.warns(completeness.RecordsChanged, match="not the file its run wrote"):
        with pytest.raises(RecordError, match=r"342 name host deadbeef0000, but provenance.json describes only") as e:
            load_records(SAMPLE / "net", tmp_path / "forged")
    assert str(e.value).startswith(str(forged)) and "AMD EPYC, 2 CPUs" in str(e.value)


def test_two_folders_naming_no_machine_are_two_hosts_each_named_by_its_folder(tmp_path, capsys):
    """No host column and no provenance in either: before, pooled as host "unknown" (n 3 → 6)."""
    folders = []
    for run_id in ("quick-0c0c0c0c0c", "quick-0d0d0d0d0d"):
        folder = _copy(NET, tmp_path / "anonymous", run_id)
        _rows(folder).drop(columns=["host"]).to_csv(folder / "records.csv", index=False)
        for name in ("provenance.json", completeness.NAME):
            (folder / name).unlink()
        folders.append(folder)
    with pytest.warns(record_files.UnknownHost, match="2 folder.s. name no machine") as said:
        frame = load_records(tmp_path / "anonymous")
    hosts = sorted(frame["host"].unique())
    assert len(hosts) == 2 and all(h.startswith("unknown-quick-0") for h in hosts), hosts
    message = str(said[0].message)
    assert all(f"{folder} as unknown-{folder.name}-" in message for folder in folders), message
    code, table, err = _claims(capsys, tmp_path / "anonymous")
    assert code == 0 and "never pooled with another" in err
    nat = table[table["claim"] == "nat_lengthens_transmit_path"]
    assert sorted(nat["host"]) == hosts and list(nat["n"]) == [3, 3]


# ---------------------------------------------------------------- a records.csv whole


def _cut_at(fraction: float):
    def cut(folder: Path) -> None:
        lines = (folder / "records.csv").read_text().splitlines(keepends=True)
        (folder / "records.csv").write_text("".join(lines[: int(len(lines) * fraction)]))

    return cut


def _without_repetition(repetition: str):
    def drop(folder: Path) -> None:
        rows = _rows(folder)
        rows[rows["repetition"] != repetition].to_csv(folder / "records.csv", index=False)

    return drop


@pytest.mark.parametrize(
    ("run", "change", "message"),
    [
        (NET, _cut_at(0.5), r"holds 170 records, its run wrote 342 \(records.manifest.json\); repetition 0: 62 of 114"),
        (LATENCY, _cut_at(0.9), r"holds 2046 records, its run wrote 2274 .*repetition 2: 646 of 730"),
        (
            NET,
            _without_repetition("2"),
            r"holds 228 records, its run wrote 342 \(records.manifest.json\); repetition 2: 0 of 114:",
        ),
    ],
    ids=["net cut at a row boundary", "latency cut at 90%", "one repetition's rows dropped"],
)
def test_a_records_file_short_of_what_its_run_wrote_is_refused_with_the_numbers(tmp_path, run, change, message):
    """Before: three net claims not testable, overlay_slows_open not testable, n 3 → 2, each silently."""
    copy = _copy(run, tmp_path / "short")
    change(copy)
    with pytest.raises(RecordError, match=message) as refused:
        load_records(tmp_path / "short")
    assert str(refused.value).startswith(str(copy / "records.csv")) and "the folder is refused" in str(refused.value)


def test_a_folder_written_before_the_count_existed_loads_as_before(tmp_path):
    old = _copy(NET, tmp_path / "old")
    (old / completeness.NAME).unlink()
    pd.testing.assert_frame_equal(
        load_records(tmp_path / "old").drop(columns="source"), load_records(NET).drop(columns="source")
    )
    _cut_at(0.5)(old)
    assert len(load_records(tmp_path / "old")) == 170, "nothing says what it held: read as it is"


def test_the_samples_count_and_checksum_are_those_of_its_files():
    for records in sorted(SAMPLE.glob("*/*/records.csv")):
        written = json.loads((records.parent / completeness.NAME).read_text())
        frame = record_files.read_records_csv(records)
        assert written == completeness.document(records, frame), records


def test_the_store_writes_the_count_and_checksum_beside_records_csv(tmp_path):
    store = RunStore(tmp_path / "redis" / "quick-x")
    for repetition, value in ((0, 1000.0), (1, 1010.0), (2, 990.0)):
        records = place(
            [Measurement("throughput", value, "req/s"), Measurement("latency_p50", 0.2, "ms")],
            experiment="redis",
            workload="redis",
            env="native",
            run_id="quick-x",
            repetition=repetition,
            params={"clients": 4},
        )
        store.save_ok(f"k{repetition}", records, {"env": "native"})
    store.consolidate()
    written = json.loads((store.root / completeness.NAME).read_text())
    assert written["records"] == 6 and written["records_by_repetition"] == {"0": 2, "1": 2, "2": 2}
    assert written["sha256"] == completeness.sha256_of(store.root / "records.csv")
    _without_repetition("1")(store.root)
    with pytest.raises(
        RecordError, match=re.escape("holds 4 records, its run wrote 6 (records.manifest.json); repetition 1: 0 of 2")
    ):
        load_records(tmp_path)


# ---------------------------------------------------------------- one run read from two folders


def test_a_copy_resaved_with_other_timestamps_is_counted_once_naming_both_folders(tmp_path):
    """Before: 1,152 rows instead of 810, no message."""
    copy = _copy(NET, tmp_path / "resaved")
    rows = _rows(copy)
    rows["started"] = pd.to_datetime(rows["started"]).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert not rows["started"].isin(_rows(NET)["started"]).any()
    rows["sut_cpus"] = rows["sut_cpus"].str.replace(r"\.0$", "", regex=True)  # 1.0 written as 1: the same point
    rows.to_csv(copy / "records.csv", index=False)
    once = load_records(SAMPLE / "net")
    with pytest.warns(record_files.DuplicateRecords) as said:
        both = load_records(SAMPLE / "net", tmp_path / "resaved")
    assert len(once) == 810 and len(both) == 810
    pd.testing.assert_frame_equal(once, both)
    duplicates = [str(n.message) for n in said if n.category is record_files.DuplicateRecords]
    assert duplicates == [
        f"{copy}: 342 record(s) of run {NET.name} already loaded from {NET} (the same run, environment, workload, "
        "point, repetition and metric): counted once"
    ]
    assert any(n.category is completeness.RecordsChanged for n in said), "its bytes are not the run's"


def test_a_copy_resaved_with_another_value_is_refused_naming_both_folders(tmp_path):
    copy = _copy(NET, tmp_path / "resaved")
    rows = _rows(copy)
    rows["started"] = rows["started"].str.replace("+00:00", "Z", regex=False)
    rows.loc[0, "value"] = "1.5"
    rows.to_csv(copy / "records.csv", index=False)
    _rewrite_sidecar(copy)
    with pytest.raises(RecordError, match="cannot hold two values") as refused:
        load_records(SAMPLE / "net", tmp_path / "resaved")
    assert f"in {NET} and 1.5 in {copy}" in str(refused.value)
