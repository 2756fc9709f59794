"""Result bundles: run folders moved between labs with their provenance, checked before they are trusted.

A bundle is one gzip'd tar archive:

    manifest.json      what it holds: the runs (experiment, run_id), every file's size and sha256, the
                       bundle format, the kit's version and results format, who signed it
    manifest.json.sig  optional: an SSH signature of manifest.json (`ssh-keygen -Y sign`, namespace
                       `kitlib-bundle`); the manifest names every file's hash, so it covers them all
    runs/<experiment>/<run_id>/…   each run folder whole (plan, records, failures, provenance, units,
                       raw outputs, the executed notebook), without the lock and temp files

`verify` reads an archive as hostile input: members only under `runs/` or the two manifest files, only
regular files, none twice, every one listed with its hash and none listed missing, then each run folder
checked the way the kit reads one (results format, records' schema) and for agreement between its plan,
records and provenance (the manner of MLPerf's submission checker). `merge` puts a verified bundle's runs
into a results folder: a run already there with the same files is left as it is, so merging a bundle
twice changes nothing; one there with other files is refused, naming them.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kitlib.core import VERSION, hostid
from kitlib.core.errors import KitError
from kitlib.results import busy, formats, read_folder, record_files

BUNDLE_FORMAT = 1
NAMESPACE = "kitlib-bundle"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"
RUNS = "runs"
#: a run folder's name: the profile and ten hex digits of the plan's digest (`Plan.run_id`)
RUN_ID = re.compile(r"(quick|standard|paper)-[0-9a-f]{10}|[a-z0-9][a-z0-9._-]{0,99}")
EXPERIMENT = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: bounds on what an archive may hold before it is read further: far above a paper profile's run
MAX_MEMBERS = 2_000_000
MAX_MANIFEST_BYTES = 512 * 2**20
SIGN_TIMEOUT_S = 60
#: what reading a cut-off or damaged gzip'd tar archive raises
DAMAGED = (tarfile.TarError, EOFError, OSError, zlib.error, gzip.BadGzipFile)


class BundleError(KitError):
    """A bundle that cannot be written, or one that is not what it claims (its reason names the file)."""


@dataclass
class Verified:
    """What `verify` found: the manifest, its runs, and who signed it (None: unsigned or not checked)."""

    manifest: dict[str, Any]
    runs: list[tuple[str, str]]
    signer: str | None
    signature: str  # "none", "verified", or "present, not checked (no allowed signers given)"
    notes: list[str] = field(default_factory=list)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_folders(paths: Iterable[Path | str]) -> list[Path]:
    """Each given path that is a run folder (it holds plan.json), or the run folders under it
    (`<experiment>/<run_id>/plan.json`), in a stable order; a path holding none is an error."""
    found: list[Path] = []
    for given in map(Path, paths):
        if (given / "plan.json").is_file():
            found.append(given)
            continue
        below = sorted(p.parent for p in given.glob("*/plan.json")) + sorted(
            p.parent for p in given.glob("*/*/plan.json")
        )
        if not below:
            raise BundleError(f"{given}: no run folder here (a run folder holds plan.json)")
        found += below
    unique = list(dict.fromkeys(p.resolve() for p in found))
    names = [(p.parent.name, p.name) for p in unique]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BundleError(f"two folders are the same run {twice[0][0]}/{twice[0][1]}; bundle one of them")
    return unique


def _files_of(run: Path) -> list[Path]:
    """A run folder's files as a bundle carries them: regular files, not the lock or a writer's temp file."""
    files = []
    for path in sorted(run.rglob("*")):
        relative = path.relative_to(run)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if path.is_symlink():
            raise BundleError(f"{path}: a symbolic link; a bundle carries regular files only")
        if path.is_file():
            files.append(path)
    return files


def write(
    folders: Iterable[Path | str], output: Path | str, key: Path | str | None = None, signer: str | None = None
) -> dict[str, Any]:
    """Bundle the run folders into `output` (written whole or not at all), signed with the SSH private
    `key` when given; returns the manifest. A run still being measured (its lock held) is refused."""
    output = Path(output)
    runs = run_folders(folders)
    entries: dict[str, Path] = {}
    listed = []
    for run in runs:
        if busy(run):
            raise BundleError(f"{run}: a run is in progress there (its lock is held); bundle it once it ends")
        experiment, run_id = run.parent.name, run.name
        if not (EXPERIMENT.fullmatch(experiment) and RUN_ID.fullmatch(run_id)):
            raise BundleError(f"{run}: not a run folder's place (<results>/<experiment>/<run_id>)")
        read_folder(run)  # a folder this kit cannot read (a newer format, a bad records file) is refused
        listed.append({"experiment": experiment, "run_id": run_id})
        for path in _files_of(run):
            entries[f"{RUNS}/{experiment}/{run_id}/{path.relative_to(run).as_posix()}"] = path
    manifest = {
        "kind": NAMESPACE,
        "bundle_format": BUNDLE_FORMAT,
        "kit_version": VERSION,
        "results_format": formats.FORMAT_VERSION,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "signer": signer if key is not None else None,
        "runs": listed,
        "files": {name: {"size": path.stat().st_size, "sha256": _sha256(path)} for name, path in entries.items()},
    }
    text = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent, prefix=".bundle-") as scratch:
        signature = _sign(text, Path(key), Path(scratch)) if key is not None else None
        partial = Path(scratch) / "bundle.tar.gz"
        with tarfile.open(partial, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            _add_bytes(tar, MANIFEST, text)
            if signature is not None:
                _add_bytes(tar, SIGNATURE, signature)
            for name, path in entries.items():
                info = tar.gettarinfo(str(path), arcname=name)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
        os.replace(partial, output)
    return manifest


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _need_ssh_keygen(what: str) -> None:
    if shutil.which("ssh-keygen") is None:
        raise BundleError(f"{what} needs ssh-keygen (Debian: openssh-client)")


def _sign(text: bytes, key: Path, scratch: Path) -> bytes:
    """`ssh-keygen -Y sign` of the manifest with the lab's private key."""
    if not key.is_file():
        raise BundleError(f"--sign {key}: no such private key file")
    _need_ssh_keygen("signing")
    target = scratch / MANIFEST
    target.write_bytes(text)
    done = subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", NAMESPACE, str(target)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=SIGN_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise BundleError(f"ssh-keygen could not sign with {key}: {(done.stderr or done.stdout).strip()[:300]}")
    return (scratch / (MANIFEST + ".sig")).read_bytes()


# ------------------------------------------------------------------------------------------ reading


def _members(bundle: Path) -> tuple[tarfile.TarFile, dict[str, tarfile.TarInfo]]:
    """The archive's members by name, each a regular file at a safe relative path, none twice."""
    try:
        tar = tarfile.open(bundle, "r:gz")
    except FileNotFoundError:
        raise BundleError(f"{bundle}: no such file") from None
    except DAMAGED as exc:
        raise BundleError(f"{bundle}: not a whole gzip'd tar archive ({exc}): cut off or not a bundle") from None
    try:
        return tar, _safe_members(bundle, tar)
    except DAMAGED as exc:
        tar.close()
        raise BundleError(f"{bundle}: not a whole gzip'd tar archive ({exc}): cut off or not a bundle") from None
    except BundleError:
        tar.close()
        raise


def _safe_members(bundle: Path, tar: tarfile.TarFile) -> dict[str, tarfile.TarInfo]:
    members = tar.getmembers()
    if len(members) > MAX_MEMBERS:
        raise BundleError(f"{bundle}: {len(members)} members, more than a bundle holds ({MAX_MEMBERS})")
    found: dict[str, tarfile.TarInfo] = {}
    for member in members:
        name = member.name
        parts = Path(name).parts
        if name.startswith("/") or not parts or ".." in parts or "\\" in name or name != Path(name).as_posix():
            raise BundleError(f"{bundle}: member {name!r} lies outside the bundle")
        if member.isdir():
            continue
        if not member.isfile():
            raise BundleError(f"{bundle}: member {name!r} is not a regular file (links and devices are refused)")
        if name in found:
            raise BundleError(f"{bundle}: member {name!r} appears twice")
        if name not in (MANIFEST, SIGNATURE) and parts[0] != RUNS:
            raise BundleError(f"{bundle}: member {name!r} is neither the manifest nor under {RUNS}/")
        found[name] = member
    return found


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, limit: int) -> bytes:
    if member.size > limit:
        raise BundleError(f"member {member.name!r} has {member.size} bytes, more than {limit}")
    handle = tar.extractfile(member)
    assert handle is not None  # a regular file, checked in _members
    return handle.read()


def _manifest(bundle: Path, text: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise BundleError(f"{bundle}: {MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != NAMESPACE:
        raise BundleError(f"{bundle}: {MANIFEST} is not a kitlib bundle's manifest")
    version = manifest.get("bundle_format")
    if not isinstance(version, int) or version < 1:
        raise BundleError(f"{bundle}: {MANIFEST} names no bundle format")
    if version > BUNDLE_FORMAT:
        raise BundleError(
            f"{bundle}: written in bundle format {version} by kitlib {manifest.get('kit_version')}; "
            f"this kit reads bundle format {BUNDLE_FORMAT}: update the kit"
        )
    files, runs = manifest.get("files"), manifest.get("runs")
    if not isinstance(files, dict) or not isinstance(runs, list):
        raise BundleError(f"{bundle}: {MANIFEST} lacks its files or runs")
    for entry in files.values():
        if not (
            isinstance(entry, dict) and isinstance(entry.get("size"), int) and isinstance(entry.get("sha256"), str)
        ):
            raise BundleError(f"{bundle}: {MANIFEST} lists a file without its size and sha256")
    for run in runs:
        if not (
            isinstance(run, dict)
            and isinstance(run.get("experiment"), str)
            and isinstance(run.get("run_id"), str)
            and EXPERIMENT.fullmatch(run["experiment"])
            and RUN_ID.fullmatch(run["run_id"])
        ):
            raise BundleError(f"{bundle}: {MANIFEST} lists a run that is not an experiment and run_id: {run!r}")
    return manifest


def _check_signature(
    bundle: Path, manifest_bytes: bytes, signature: bytes | None, allowed_signers: Path | None
) -> tuple[str | None, str]:
    if signature is None:
        if allowed_signers is not None:
            raise BundleError(f"{bundle}: unsigned, and --allowed-signers asks for a signature")
        return None, "none"
    if allowed_signers is None:
        return None, "present, not checked (no allowed signers given)"
    _need_ssh_keygen("checking a signature")
    with tempfile.TemporaryDirectory(prefix="kit-verify-") as scratch:
        sig = Path(scratch) / SIGNATURE
        sig.write_bytes(signature)
        found = subprocess.run(
            ["ssh-keygen", "-Y", "find-principals", "-s", str(sig), "-f", str(allowed_signers)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=SIGN_TIMEOUT_S,
        )
        principals = found.stdout.split()
        if found.returncode != 0 or not principals:
            raise BundleError(f"{bundle}: signed by a key that {allowed_signers} does not list")
        checked = subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-f", str(allowed_signers), "-I", principals[0], "-n", NAMESPACE]
            + ["-s", str(sig)],
            input=manifest_bytes,
            capture_output=True,
            timeout=SIGN_TIMEOUT_S,
        )
        if checked.returncode != 0:
            reason = (checked.stderr or checked.stdout).decode(errors="replace").strip()[:300]
            raise BundleError(f"{bundle}: the signature does not match its manifest: {reason}")
    return principals[0], "verified"


def _extract(bundle: Path, tar: tarfile.TarFile, members: dict[str, tarfile.TarInfo], manifest, target: Path) -> None:
    """Every listed file into `target`, each hashed as it is written; any file unlisted, missing, of
    another size or hash is an error naming it."""
    files = manifest["files"]
    unlisted = sorted(set(members) - set(files) - {MANIFEST, SIGNATURE})
    if unlisted:
        raise BundleError(f"{bundle}: {unlisted[0]} is in the archive but not in its manifest")
    missing = sorted(set(files) - set(members))
    if missing:
        raise BundleError(f"{bundle}: {missing[0]} is in the manifest but not in the archive")
    for name in sorted(files):
        member, expected = members[name], files[name]
        if member.size != expected["size"]:
            raise BundleError(f"{bundle}: {name} has {member.size} bytes, its manifest says {expected['size']}")
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        source = tar.extractfile(member)
        assert source is not None
        with destination.open("wb") as out:
            while block := source.read(1 << 20):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != expected["sha256"]:
            raise BundleError(f"{bundle}: {name} does not match its manifest's sha256: changed after it was bundled")


def _check_run(bundle: Path, folder: Path, experiment: str, run_id: str) -> list[str]:
    """A run folder read as the kit reads one, then its plan, records and provenance held to each other."""
    where = f"{bundle}: {RUNS}/{experiment}/{run_id}"
    if not (folder / "plan.json").is_file():
        raise BundleError(f"{where} has no plan.json")
    try:
        run = formats.upgrade(read_folder(folder))
    except KitError as exc:
        raise BundleError(f"{where}: {exc}") from None
    plan = run.plan or {}
    notes = []
    if plan.get("experiment") != experiment:
        raise BundleError(f"{where}: its plan is of {plan.get('experiment')!r}, not of {experiment!r}")
    if plan.get("profile") and not run_id.startswith(f"{plan['profile']}-"):
        raise BundleError(f"{where}: its plan's profile {plan['profile']!r} does not name this run")
    records = run.records
    if not records.empty:
        for column, expected in (("experiment", experiment), ("run_id", run_id)):
            others = sorted(set(records[column].astype(str)) - {expected}) if column in records else []
            if others:
                raise BundleError(f"{where}: records of {column} {others[0]!r} in a folder of {expected!r}")
        hosts = set(records["host"].dropna().astype(str)) if "host" in records else set()
        known = _session_hosts(run.sessions)
        if hosts - known:
            raise BundleError(f"{where}: records of host {sorted(hosts - known)[0]} that no provenance session ran on")
    for session in run.sessions:
        recorded = session.get("plan")
        if isinstance(recorded, dict) and recorded.get("experiment") not in (None, experiment):
            raise BundleError(f"{where}: a provenance session ran a plan of {recorded.get('experiment')!r}")
        if isinstance(recorded, dict) and "params" in recorded and recorded["params"] != plan.get("params"):
            raise BundleError(f"{where}: a provenance session ran other parameters than plan.json holds")
    if not run.sessions and not records.empty:
        notes.append(f"{experiment}/{run_id}: records without provenance sessions")
    return notes


def _session_hosts(sessions: list[dict[str, Any]]) -> set[str]:
    """Every host id the records of these sessions may carry: the machine each ran on and the remote
    systems under test it reached."""
    known: set[str] = set()
    for session in sessions:
        for machine in record_files.session_machines(session):
            known |= hostid.recorded_ids(machine) | {hostid.host_id(machine)}
        if session.get("host_id"):
            known.add(str(session["host_id"]))
    return known


def _open_verified(bundle: Path | str, target: Path, allowed_signers: Path | str | None = None) -> Verified:
    bundle = Path(bundle)
    tar, members = _members(bundle)
    with tar:
        if MANIFEST not in members:
            raise BundleError(f"{bundle}: no {MANIFEST}; not a bundle the kit wrote")
        manifest_bytes = _read_member(tar, members[MANIFEST], MAX_MANIFEST_BYTES)
        manifest = _manifest(bundle, manifest_bytes)
        signature = _read_member(tar, members[SIGNATURE], 1 << 20) if SIGNATURE in members else None
        signer, status = _check_signature(
            bundle, manifest_bytes, signature, Path(allowed_signers) if allowed_signers else None
        )
        runs = [(r["experiment"], r["run_id"]) for r in manifest["runs"]]
        prefixes = {f"{RUNS}/{e}/{r}/" for e, r in runs}
        strays = sorted(n for n in manifest["files"] if not any(n.startswith(p) for p in prefixes))
        if strays:
            raise BundleError(f"{bundle}: {strays[0]} belongs to no run its manifest lists")
        try:
            _extract(bundle, tar, members, manifest, target)
        except DAMAGED as exc:
            raise BundleError(f"{bundle}: cut off or damaged while reading ({exc})") from None
    notes = []
    for experiment, run_id in runs:
        notes += _check_run(bundle, target / RUNS / experiment / run_id, experiment, run_id)
    return Verified(manifest=manifest, runs=runs, signer=signer, signature=status, notes=notes)


def verify(bundle: Path | str, allowed_signers: Path | str | None = None) -> Verified:
    """Check a bundle whole (see the module's description); BundleError names the first thing wrong."""
    with tempfile.TemporaryDirectory(prefix="kit-verify-") as scratch:
        return _open_verified(bundle, Path(scratch), allowed_signers)


@contextlib.contextmanager
def opened(bundle: Path | str, allowed_signers: Path | str | None = None) -> Iterator[Path]:
    """The bundle verified whole and unpacked into a scratch results folder (`<experiment>/<run_id>`)
    for as long as the `with` lasts: to read it without merging it anywhere."""
    with tempfile.TemporaryDirectory(prefix="kit-bundle-") as scratch:
        _open_verified(bundle, Path(scratch), allowed_signers)
        yield Path(scratch) / RUNS


def merge(bundle: Path | str, results: Path | str, allowed_signers: Path | str | None = None) -> list[tuple[str, str]]:
    """Verify the bundle, then put each of its runs into `results/<experiment>/<run_id>`: (run, "added")
    for a new one, (run, "already there") for one holding the same files. A run there with other files
    is refused, naming one, and nothing of the bundle is put in place."""
    results = Path(results)
    results.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=results, prefix=".bundle-") as scratch:
        verified = _open_verified(bundle, Path(scratch), allowed_signers)
        plan: list[tuple[str, Path, Path | None]] = []
        for experiment, run_id in verified.runs:
            source = Path(scratch) / RUNS / experiment / run_id
            target = results / experiment / run_id
            name = f"{experiment}/{run_id}"
            if target.exists():
                differing = _differences(verified.manifest["files"], f"{RUNS}/{name}/", target)
                if differing:
                    raise BundleError(
                        f"{target} already holds run {name} with other files ({differing[0]}); "
                        "merge into another results folder, or move that run aside"
                    )
                plan.append((name, target, None))
            else:
                plan.append((name, target, source))
        done = []
        for name, target, source in plan:
            if source is None:
                done.append((name, "already there"))
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            done.append((name, "added"))
    return done


def _differences(files: dict[str, dict[str, Any]], prefix: str, target: Path) -> list[str]:
    """Files that differ between a bundled run (its verified manifest entries under `prefix`) and the run
    folder of the same name (the lock and temp files of the folder aside)."""
    mine = {name.removeprefix(prefix): entry["sha256"] for name, entry in files.items() if name.startswith(prefix)}
    theirs = {p.relative_to(target).as_posix(): p for p in _files_of(target)}
    names = sorted(set(mine) | set(theirs))
    return [n for n in names if n not in mine or n not in theirs or mine[n] != _sha256(theirs[n])]
