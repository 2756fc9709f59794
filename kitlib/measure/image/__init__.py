"""The benchmark image: built once per content of its inputs, from a base made locally if need be.

The tag is a hash of the Dockerfile and the base image id, so the image is rebuilt only when one
of them changes. Where `debian:bookworm-slim` cannot be pulled (no registry reachable), the base
is made with `debootstrap --variant=minbase` and `docker import`, and the kit says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import logging
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from kitlib.core import paths
from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.host import commands

log = logging.getLogger(__name__)

DOCKERFILE = Path(__file__).with_name("Dockerfile")
#: the kit's own programs' sources, built into the image (`src/build.sh`)
SOURCES = Path(__file__).with_name("src")
DEFAULT_BASE = "debian:bookworm-slim"
LOCAL_BASE = "kitlib/debian-base:bookworm"
REPOSITORY = "kitlib/bench"
DEBIAN_MIRROR = "http://deb.debian.org/debian"


def ensure_image(client, base: str = DEFAULT_BASE, *, notify=print) -> str:
    """Return the tag of an up-to-date benchmark image, building it (and its base) when missing."""
    with build_lock():
        base_id = _ensure_base(client, base, notify)
        tag = f"{REPOSITORY}:{image_digest(base_id)}"
        if _exists(client, tag):
            return tag
        notify(f"building the benchmark image {tag} (FROM {base}) …")
        _build(client, DOCKERFILE.read_text(), tag, {"BASE": base_id}, "benchmark-image", sources())
        return tag


def ensure_derived(client, parent: str, steps: list[str], repository: str, *, notify=print) -> str:
    """An image FROM `parent` adding one layer per RUN step, cached by the parent id and the steps."""
    parent_id = client.images.get(parent).id
    digest = hashlib.sha256("\n".join([parent_id, *steps]).encode()).hexdigest()[:12]
    tag = f"{repository}:{digest}"
    with build_lock():
        if not _exists(client, tag):
            notify(f"building {tag} ({len(steps)} layer(s) on {parent}) …")
            dockerfile = "\n".join([f"FROM {parent_id}", *(f"RUN {step}" for step in steps)]) + "\n"
            _build(client, dockerfile, tag, {}, "derived-image")
    return tag


def sources() -> dict[str, bytes]:
    """The files of `src/` by their path in the build context."""
    return {f"src/{path.name}": path.read_bytes() for path in sorted(SOURCES.iterdir()) if path.is_file()}


def inputs_digest() -> str:
    """sha256 over the Dockerfile and every source file the image builds, in a fixed order."""
    digest = hashlib.sha256(DOCKERFILE.read_bytes())
    for name, data in sources().items():
        digest.update(f"\0{name}\0".encode() + data)
    return digest.hexdigest()


def _build(
    client, dockerfile: str, tag: str, buildargs: dict[str, str], role: str, files: dict[str, bytes] | None = None
) -> None:
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile.encode(), **(files or {})}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    try:
        client.images.build(
            fileobj=context,
            custom_context=True,
            tag=tag,
            buildargs=buildargs,
            rm=True,
            forcerm=True,
            labels={"org.kitlib.role": role},
        )
    except Exception as exc:  # docker.errors.BuildError carries the build log
        lines = [c.get("stream", "") for c in getattr(exc, "build_log", [])]
        raise EnvironmentUnavailable(f"building {tag} failed: {exc}\n{''.join(lines)[-2000:]}") from exc


def image_digest(base_id: str) -> str:
    return hashlib.sha256((inputs_digest() + base_id).encode()).hexdigest()[:12]


def _ensure_base(client, base: str, notify) -> str:
    """The id of the base image: local, else pulled, else made with debootstrap (only for bookworm)."""
    if _exists(client, base):
        return client.images.get(base).id
    try:
        return client.images.pull(base).id
    except Exception as exc:  # no registry, rate limit, unknown image
        if base != DEFAULT_BASE:
            raise EnvironmentUnavailable(f"base image {base} is not local and cannot be pulled: {exc}") from exc
        pull_error = str(exc).splitlines()[0][:200]
    if _exists(client, LOCAL_BASE):
        notify(f"{base} cannot be pulled ({pull_error}); using the locally made base {LOCAL_BASE}")
        return client.images.get(LOCAL_BASE).id
    notify(f"{base} cannot be pulled ({pull_error}); making it with debootstrap (about a minute) …")
    return _debootstrap_base(client)


def _debootstrap_base(client) -> str:
    if shutil.which("debootstrap") is None:
        raise EnvironmentUnavailable("no base image and no debootstrap to make one (apt-get install debootstrap)")
    root = Path(tempfile.mkdtemp(prefix="kitlib-base-", dir=paths.scratch_root().parent))
    try:
        commands.checked(["debootstrap", "--variant=minbase", "bookworm", str(root), DEBIAN_MIRROR], timeout=900)
        tar = ["tar", "-C", str(root), "-c", "."]
        archive = subprocess.run(tar, capture_output=True, check=True).stdout  # bytes: not `commands.run`
        commands.note(tar, 0, 0.0)
        repository, tag = LOCAL_BASE.split(":")
        client.api.import_image_from_data(archive, repository=repository, tag=tag)
        return client.images.get(LOCAL_BASE).id
    finally:
        shutil.rmtree(root, ignore_errors=True)


def base_here(client) -> str | None:
    """A base image this engine already has (none is pulled or made): a small image to try things with."""
    return next((base for base in (DEFAULT_BASE, LOCAL_BASE) if _exists(client, base)), None)


def _exists(client, ref: str) -> bool:
    import docker.errors

    try:
        client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


@contextlib.contextmanager
def build_lock():
    """One build at a time on this host, also across processes (parallel test runs, notebooks)."""
    lock_dir = paths.cache_root()
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / "image.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
