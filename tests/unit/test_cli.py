"""`kit parse` as a user calls it."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

from ..conftest import DATA


def kit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kitlib.cli", *args], capture_output=True, text=True, timeout=120)


def test_parse_prints_tidy_csv():
    done = kit("parse", "redis-benchmark", str(DATA / "redis-benchmark" / "get-c8-p10.csv"))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(rows[0])[:3] == ["metric", "value", "unit"]
    throughput = next(r for r in rows if r["metric"] == "throughput")
    assert float(throughput["value"]) == 251256.28 and throughput["op"] == "GET"


def test_parse_garbage_fails_naming_tool_and_file(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("not a benchmark output\n")
    done = kit("parse", "redis-benchmark", str(junk))
    assert done.returncode != 0
    assert "redis-benchmark" in done.stderr and str(junk) in done.stderr
    missing = kit("parse", "redis-benchmark", str(tmp_path / "absent.txt"))
    assert missing.returncode != 0 and "cannot read" in missing.stderr


def test_a_reader_that_stops_early_gets_no_traceback():
    """`kit claims --list | head -1`: the pipe closes while kit writes; kit ends quietly."""
    import subprocess
    import sys

    kit = subprocess.Popen(
        [sys.executable, "-m", "kitlib.cli", "claims", "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert kit.stdout.readline().startswith(b"claim,source,quote")
    kit.stdout.close()  # the reader is gone: kit's next writes meet a broken pipe
    stderr = kit.stderr.read().decode()
    assert kit.wait(timeout=120) == 0 and "Traceback" not in stderr, stderr
