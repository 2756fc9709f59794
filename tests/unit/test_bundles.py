"""Result bundles on the sample's real run folders, signed with real SSH keys (ssh-keygen -Y), and read as
hostile input: every archive changed after it was written is refused, naming what is wrong."""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pandas as pd
import pytest

from kitlib.results import bundles, load_records
from kitlib.results.bundles import BundleError

from ..support import sample

SAMPLE = sample.SAMPLE
REDIS = sample.run_with("redis", "native")


def _contents(bundle: Path) -> dict[str, bytes]:
    with tarfile.open(bundle, "r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def _pack(path: Path, members: dict[str, bytes], extra: list[tarfile.TarInfo] = ()) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra:
            tar.addfile(info)
    return path


def _relisted(members: dict[str, bytes]) -> dict[str, bytes]:
    """The members with a manifest that lists them as they are now (what a forger would write)."""
    manifest = json.loads(members[bundles.MANIFEST])
    manifest["files"] = {
        name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in members.items()
        if name not in (bundles.MANIFEST, bundles.SIGNATURE)
    }
    return {**members, bundles.MANIFEST: json.dumps(manifest).encode()}


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """Two labs' real ed25519 keys and an allowed_signers file naming the first only."""
    folder = tmp_path_factory.mktemp("keys")
    for name in ("lab-a", "lab-b"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(folder / name)], check=True
        )
    public = (folder / "lab-a.pub").read_text().split()[:2]
    (folder / "allowed").write_text(f"lab-a@example.org {' '.join(public)}\n")
    return folder


@pytest.fixture(scope="module")
def sample_bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("bundle") / "sample.tar.gz"
    bundles.write([SAMPLE], path)
    return path


def test_the_whole_sample_bundles_verifies_and_merges_into_the_same_records(sample_bundle, tmp_path):
    found = bundles.verify(sample_bundle)
    runs = sorted(p.parent for p in SAMPLE.glob("*/*/plan.json"))
    assert len(found.runs) == len(runs) >= 10 and found.signature == "none" and found.notes == []
    first = bundles.merge(sample_bundle, tmp_path / "results")
    assert {what for _, what in first} == {"added"} and len(first) == len(runs)
    again = bundles.merge(sample_bundle, tmp_path / "results")
    assert {what for _, what in again} == {"already there"}, "merging the same bundle twice changes nothing"
    mine = load_records(tmp_path / "results").drop(columns="source")
    theirs = load_records(SAMPLE).drop(columns="source")
    key = ["run_id", "env", "metric", "repetition", "value"]
    pd.testing.assert_frame_equal(
        mine.sort_values(key).reset_index(drop=True), theirs.sort_values(key).reset_index(drop=True)
    )


def test_a_signed_bundle_is_verified_by_its_signer_and_refused_by_any_other(keys, tmp_path):
    path = tmp_path / "signed.tar.gz"
    manifest = bundles.write([REDIS], path, key=keys / "lab-a", signer="lab-a@example.org")
    assert manifest["signer"] == "lab-a@example.org"
    assert bundles.verify(path).signature.startswith("present, not checked")
    found = bundles.verify(path, keys / "allowed")
    assert (found.signature, found.signer) == ("verified", "lab-a@example.org")

    forged = tmp_path / "forged.tar.gz"
    bundles.write([REDIS], forged, key=keys / "lab-b", signer="lab-a@example.org")
    with pytest.raises(BundleError, match="does not list"):
        bundles.verify(forged, keys / "allowed")
    unsigned = bundles.write([REDIS], tmp_path / "unsigned.tar.gz")
    assert unsigned["signer"] is None
    with pytest.raises(BundleError, match="unsigned, and --allowed-signers asks for a signature"):
        bundles.verify(tmp_path / "unsigned.tar.gz", keys / "allowed")

    members = _contents(path)
    name = next(n for n in members if n.endswith("records.csv"))
    changed = members[name].replace(b"redis", b"redix", 1)
    relisted = _relisted({**members, name: changed})  # hashes recomputed, the old signature kept
    with pytest.raises(BundleError, match="signature does not match its manifest"):
        bundles.verify(_pack(tmp_path / "relisted.tar.gz", relisted), keys / "allowed")


def _with(members: dict[str, bytes], **changes) -> dict[str, bytes]:
    return {**members, **changes}


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda m, r: _with(m, **{r: m[r][:-1] + b"9"}), "does not match its manifest's sha256"),
        (lambda m, r: _with(m, **{r: m[r] + b"\n"}), "bytes, its manifest says"),
        (lambda m, r: {**m, f"runs/redis/{REDIS.name}/extra.txt": b"x"}, "not in its manifest"),
        (lambda m, r: {k: v for k, v in m.items() if k != r}, "in the manifest but not in the archive"),
        (lambda m, r: {**m, "runs/../evil": b"x"}, "lies outside the bundle"),
        (lambda m, r: {**m, "/etc/evil": b"x"}, "lies outside the bundle"),
        (lambda m, r: {**m, "elsewhere/file": b"x"}, "neither the manifest nor under runs/"),
        (lambda m, r: {k: v for k, v in m.items() if k != bundles.MANIFEST}, "no manifest.json"),
        (lambda m, r: _with(m, **{bundles.MANIFEST: b"{not json"}), "not valid JSON"),
        (
            lambda m, r: _with(
                m, **{bundles.MANIFEST: m[bundles.MANIFEST].replace(b'"bundle_format": 1', b'"bundle_format": 9')}
            ),
            "bundle format 9 .* this kit reads bundle format 1",
        ),
    ],
)
def test_an_archive_changed_after_it_was_written_is_refused(sample_bundle, tmp_path, make, message):
    members = _contents(sample_bundle)
    records = f"runs/redis/{REDIS.name}/records.csv"
    with pytest.raises(BundleError, match=message):
        bundles.verify(_pack(tmp_path / "changed.tar.gz", make(members, records)))


def test_links_cut_off_archives_and_foreign_files_are_refused(sample_bundle, tmp_path):
    members = _contents(sample_bundle)
    link = tarfile.TarInfo(f"runs/redis/{REDIS.name}/link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with pytest.raises(BundleError, match="not a regular file"):
        bundles.verify(_pack(tmp_path / "link.tar.gz", members, [link]))
    whole = sample_bundle.read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(BundleError, match="cut off"):
        bundles.verify(tmp_path / "cut.tar.gz")
    (tmp_path / "text.tar.gz").write_text("a plain text file\n")
    with pytest.raises(BundleError, match="not a whole gzip'd tar archive"):
        bundles.verify(tmp_path / "text.tar.gz")
    with pytest.raises(BundleError, match="no such file"):
        bundles.verify(tmp_path / "absent.tar.gz")


def test_plan_records_and_provenance_that_disagree_are_refused_even_with_hashes_that_match(sample_bundle, tmp_path):
    members = _contents(sample_bundle)
    base = f"runs/redis/{REDIS.name}/"
    records = members[base + "records.csv"].decode()
    cases = {
        "records of run_id 'quick-0000000000'": {
            base + "records.csv": records.replace(REDIS.name, "quick-0000000000").encode()
        },
        "records of host 0123456789ab that no provenance session ran on": {
            base + "records.csv": records.replace(sample.main_host(), "0123456789ab").encode()
        },
        "its plan is of 'cpu', not of 'redis'": {
            base + "plan.json": members[base + "plan.json"].replace(b'"experiment": "redis"', b'"experiment": "cpu"')
        },
    }
    for message, change in cases.items():
        forged = _relisted({**members, **change})
        assert forged[bundles.MANIFEST] != members[bundles.MANIFEST]
        with pytest.raises(BundleError, match=message):
            bundles.verify(_pack(tmp_path / "forged.tar.gz", forged))


def test_a_run_there_with_other_files_is_refused_and_nothing_is_merged(tmp_path):
    path = tmp_path / "two.tar.gz"
    bundles.write([REDIS, SAMPLE / "cpu"], path)
    results = tmp_path / "results"
    shutil.copytree(REDIS, results / "redis" / REDIS.name)
    with (results / "redis" / REDIS.name / "records.csv").open("a") as out:
        out.write("\n")
    with pytest.raises(BundleError, match=f"already holds run redis/{REDIS.name} with other files .records.csv."):
        bundles.merge(path, results)
    assert not (results / "cpu").exists(), "nothing of the bundle is put in place"
    assert [p.name for p in results.iterdir()] == ["redis"], "no scratch folder is left"


def test_a_run_in_progress_or_a_folder_without_runs_is_not_bundled(tmp_path):
    run = tmp_path / "results" / "redis" / REDIS.name
    shutil.copytree(REDIS, run)
    with (run / ".lock").open("w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        with pytest.raises(BundleError, match="a run is in progress there"):
            bundles.write([run], tmp_path / "b.tar.gz")
    bundles.write([tmp_path / "results"], tmp_path / "b.tar.gz")
    assert bundles.MANIFEST in _contents(tmp_path / "b.tar.gz") and not any(
        ".lock" in n for n in _contents(tmp_path / "b.tar.gz")
    )
    with pytest.raises(BundleError, match="no run folder here"):
        bundles.write([tmp_path / "empty"], tmp_path / "c.tar.gz")
    assert not (tmp_path / "c.tar.gz").exists()
