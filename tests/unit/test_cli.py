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


def test_bundle_verify_and_merge_as_two_labs_call_them(tmp_path):
    """Lab A bundles two runs and signs them; lab B verifies against its allowed_signers and merges twice."""
    from kitlib.core.paths import PROJECT_ROOT

    key = tmp_path / "lab-a"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed"
    allowed.write_text("lab-a@example.org " + " ".join(key.with_suffix(".pub").read_text().split()[:2]) + "\n")
    bundle = tmp_path / "a.tar.gz"
    runs = [str(PROJECT_ROOT / "data" / "sample" / "redis"), str(PROJECT_ROOT / "data" / "sample" / "cpu")]
    made = kit("bundle", *runs, "-o", str(bundle), "--sign", str(key), "--signer", "lab-a@example.org")
    assert made.returncode == 0 and "3 run(s)" in made.stdout and "signed with" in made.stdout, made.stderr
    checked = kit("verify", str(bundle), "--allowed-signers", str(allowed))
    assert checked.returncode == 0 and "signature: verified by lab-a@example.org" in checked.stdout, checked.stderr
    results = tmp_path / "results"
    first = kit("merge", str(bundle), "--results", str(results), "--allowed-signers", str(allowed))
    second = kit("merge", str(bundle), "--results", str(results))
    assert first.stdout.count(": added") == 3 and second.stdout.count(": already there") == 3, first.stderr
    bundle.write_bytes(bundle.read_bytes()[:-100])
    refused = kit("verify", str(bundle))
    assert refused.returncode == 2 and str(bundle) in refused.stderr and refused.stdout == ""
