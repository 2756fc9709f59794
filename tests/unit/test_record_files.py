"""Records read back: every record once however its folder is given, every bad row an error naming
file and line, one unit per metric."""

from __future__ import annotations

import io
import re
import shutil

import pandas as pd
import pytest

from kitlib import cli
from kitlib.core.errors import RecordError
from kitlib.results import load_records, record_files

from ..support import sample

SAMPLE = sample.SAMPLE
RUN = sample.run_with("net", "native")


def _claims(capsys, *folders) -> tuple[pd.DataFrame, str]:
    assert cli.main(["claims", *map(str, folders)]) == 0
    captured = capsys.readouterr()
    return pd.read_csv(io.StringIO(captured.out)), captured.err


def test_the_sample_given_twice_prints_the_same_verdicts(capsys):
    once, quiet = _claims(capsys, SAMPLE)
    twice, said = _claims(capsys, SAMPLE, SAMPLE)
    pd.testing.assert_frame_equal(once, twice)
    assert quiet == "" and said.count("counted once") == 1 and "given twice" in said
    print(f"{len(once)} verdicts, n max {once['n'].max()} once and {twice['n'].max()} twice; {said.strip()}")


def test_a_copied_or_linked_run_folder_is_counted_once(tmp_path):
    once = load_records(SAMPLE)
    (tmp_path / "copy" / "net").mkdir(parents=True)
    shutil.copytree(RUN, tmp_path / "copy" / "net" / RUN.name)
    (tmp_path / "link" / "net").mkdir(parents=True)
    (tmp_path / "link" / "net" / RUN.name).symlink_to(RUN)
    for extra in ("copy", "link"):
        with pytest.warns(record_files.DuplicateRecords, match="counted once") as notices:
            both = load_records(SAMPLE, tmp_path / extra)
        assert len(notices) == 1, [str(n.message) for n in notices]
        pd.testing.assert_frame_equal(once, both)
        print(extra, len(once), len(both), notices[0].message)


def test_the_same_run_and_unit_with_two_values_is_refused(tmp_path):
    copy = tmp_path / "copy" / "net" / RUN.name
    shutil.copytree(RUN, copy)
    text = (copy / "records.csv").read_text().splitlines()
    value = pd.read_csv(copy / "records.csv", dtype=str)["value"].iloc[0]  # the first record's, as written
    assert f",{value}," in text[1] and value != "99.0"
    text[1] = text[1].replace(f",{value},", ",99.0,", 1)
    (copy / "records.csv").write_text("\n".join(text) + "\n")
    with pytest.raises(RecordError, match=rf"{re.escape(value)}.*99.0.*cannot hold two values"):
        load_records(SAMPLE, tmp_path / "copy")


@pytest.mark.parametrize("written", ["1_000", "٣٣"])
def test_a_value_of_underscored_or_unicode_digits_in_a_real_run_is_refused_naming_its_line(tmp_path, capsys, written):
    """float() reads both (as 1000 and 33) and pandas keeps them as text, which a claim then fails on."""
    copy = tmp_path / "copy" / "net" / RUN.name
    shutil.copytree(RUN, copy)
    text = (copy / "records.csv").read_text().splitlines()
    value = pd.read_csv(copy / "records.csv", dtype=str)["value"].iloc[1]  # the second record's, as written
    text[2] = text[2].replace(f",{value},", f",{written},", 1)
    (copy / "records.csv").write_text("\n".join(text) + "\n")
    assert cli.main(["claims", str(tmp_path / "copy")]) == 2
    err = capsys.readouterr().err
    assert f"records.csv: line 3: the value '{written}' is not a number of ASCII digits" in err, err
    assert "Traceback" not in err


def _folder(tmp_path, lines: list[str]):
    run = tmp_path / "runs" / "redis" / "quick-x"
    run.mkdir(parents=True)
    (run / "records.csv").write_text("".join(line + "\n" for line in lines))
    return run


HEADER = "experiment,workload,env,metric,value,unit,run_id,repetition,clients"
GOOD = "redis,redis,native,throughput,1000.5,req/s,quick-x,0,4"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("redis,redis,native,throughput,1000.5,req/s,quick-x,0", "line 3: 8 field"),
        ("redis,redis,native,throughput,fast,req/s,quick-x,1,4", "line 3: the value 'fast' is not a number"),
        ("redis,redis,native,throughput,NaN,req/s,quick-x,1,4", "line 3: the value 'NaN' is not a finite"),
        ("redis,redis,native,throughput,null,req/s,quick-x,1,4", "line 3: the value 'null' is not a number"),
        ("redis,redis,native,throughput,,req/s,quick-x,1,4", "line 3: the value '' is not a number"),
        ("redis,redis,native,throughput,inf,req/s,quick-x,1,4", "line 3: the value 'inf' is not a finite"),
        ("redis,redis,native,throughput,1_000,req/s,quick-x,1,4", "line 3: the value '1_000' is not a number"),
        ("redis,redis,native,throughput,٣٣,req/s,quick-x,1,4", "line 3: the value '٣٣' is not a number"),
        ("redis,redis,native,throughput,1e999,req/s,quick-x,1,4", "line 3: the value '1e999' is not a finite"),
        ("redis,redis,native,throughput,5,req/s,quick-x,١,4", "line 3: the repetition '١'"),
        ("redis,redis,native,throughput,5,,quick-x,1,4", "line 3: no unit"),
        ("redis,redis,native,throughput,5,req/s,quick-x,one,4", "line 3: the repetition 'one'"),
        ("redis,redis,native,throughput,5,req/s,quick-x,1,4,extra", "line 3: 10 field"),
    ],
)
def test_a_bad_row_is_an_error_naming_file_and_line(tmp_path, row, message):
    run = _folder(tmp_path, [HEADER, GOOD, row])
    with pytest.raises(RecordError, match=message) as error:
        load_records(tmp_path / "runs")
    assert str(run / "records.csv") in str(error.value)


def test_an_empty_records_file_and_a_bad_header_are_the_kits_errors(tmp_path, capsys):
    run = _folder(tmp_path, [])
    assert cli.main(["claims", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kit: ") and "records.csv: empty" in err and "Traceback" not in err
    (run / "records.csv").write_text("experiment,env,metric,value\nredis,native,throughput,1\n")
    with pytest.raises(RecordError, match="line 1: the header lacks the column.s. unit"):
        load_records(tmp_path / "runs")


def test_a_metric_in_two_units_is_refused_naming_both(tmp_path):
    _folder(tmp_path, [HEADER, GOOD, "redis,redis,native,throughput,1.1,kreq/s,quick-x,1,4"])
    with pytest.raises(RecordError, match=r"redis redis throughput is recorded in two units: 'req/s' in .*'kreq/s' in"):
        load_records(tmp_path / "runs")


def test_good_rows_load_as_before(tmp_path):
    _folder(tmp_path, [HEADER, GOOD, "redis,redis,native,throughput,1001,req/s,quick-x,1,4"])
    frame = load_records(tmp_path / "runs")
    assert list(frame["value"]) == [1000.5, 1001.0] and list(frame["clients"]) == [4, 4]


def test_a_folder_two_clones_resumed_under_one_old_id_is_split_by_session(tmp_path):
    import json

    from kitlib.core import hostid

    epyc = {"cpu": {"model": "AMD EPYC", "logical_cpus": 2}, "os": {"machine_id": "3d" * 16}}
    xeon = {"cpu": {"model": "Intel(R) Xeon(R) Processor", "logical_cpus": 2}, "os": {"machine_id": "3d" * 16}}
    old = hostid.legacy_host_id(epyc)
    assert old == hostid.legacy_host_id(xeon)
    run = _folder(
        tmp_path,
        [
            HEADER + ",host,started",
            GOOD + f",{old},2026-01-01T10:00:00+00:00",
            "redis,redis,native,throughput,900,req/s,quick-x,1,4" + f",{old},2026-01-02T10:00:00+00:00",
        ],
    )
    sessions = [
        {"started": "2026-01-01T09:59:00+00:00", "host": {**epyc, "host_id": old}},
        {"started": "2026-01-02T09:59:00+00:00", "host": {**xeon, "host_id": old}},
    ]
    (run / "provenance.json").write_text(json.dumps({"sessions": sessions}))
    frame = load_records(tmp_path / "runs")
    assert list(frame["host"]) == [hostid.host_id(epyc), hostid.host_id(xeon)]


def test_a_machine_id_that_looks_like_a_number_stays_the_machine_it_names(tmp_path):
    """Host ids are hex digests: `0e41234567ab` reads as the float 0.0 and `123456789012` as an integer
    unless read as text, and records would then name a machine no provenance session ran on."""
    records = pd.read_csv(RUN / "records.csv", dtype=str).head(4)
    records["host"] = ["0e41234567ab", "123456789012", "0e41234567ab", "00000000001f"]
    records["program_source"] = "1234e56789012345"
    path = tmp_path / "records.csv"
    records.to_csv(path, index=False)
    read = record_files.read_records_csv(path)
    assert read["host"].tolist() == ["0e41234567ab", "123456789012", "0e41234567ab", "00000000001f"]
    assert set(read["program_source"]) == {"1234e56789012345"}
    assert pd.api.types.is_numeric_dtype(read["value"])
