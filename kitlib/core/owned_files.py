"""Files and folders the kit trusts only when they are its own: created with explicit modes (never by
changing the process umask, which other threads share), and refused when another user owns them or
others may write them (a folder another user made first could hand the kit their files)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from kitlib.core.errors import KitError

#: group or others may write: such a file or folder could be replaced under the kit
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def refuse_foreign(path: Path, info: os.stat_result, owner: int) -> None:
    """Refuse a file or folder that `owner` does not own, or that group or others may write."""
    if info.st_uid != owner:
        raise KitError(
            f"{path} is owned by uid {info.st_uid}, not {owner}: the kit does not use a file another user "
            "controls; remove it, or choose a folder of your own"
        )
    if info.st_mode & OTHERS_WRITE:
        raise KitError(
            f"{path} may be written by others (mode {stat.S_IMODE(info.st_mode):04o}): the kit does not use it; "
            f"`chmod go-w {path}` or remove it"
        )


def private_dir(path: Path) -> Path:
    """`path` as a folder of this user's alone: created 0700 where missing (its parents as mkdir -p
    makes them), else refused unless it is a real folder this user owns that others cannot write."""
    return own_dir(path, 0o700)


def own_dir(path: Path, mode: int) -> Path:
    """`path` as a folder of this user's: created with `mode` where missing, else refused unless it is
    a real folder (no link) this user owns that group and others cannot write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, mode)
        os.chmod(path, mode)  # mkdir's mode passes through the umask; chmod's does not
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise KitError(f"{path} is not a folder (a link or a file stands there): the kit does not use it")
    refuse_foreign(path, info, os.geteuid())
    return path


def read_owned(path: Path, owner: int) -> str | None:
    """The text of a regular file `owner` owns and others cannot write (no link followed); None where
    there is none; a file of another user is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise KitError(f"{path}: {exc.strerror} (a link or an unreadable file): the kit does not use it") from exc
    with os.fdopen(fd) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise KitError(f"{path} is not a regular file: the kit does not use it")
        refuse_foreign(path, info, owner)
        return handle.read()


def create_once(path: Path, text: str, mode: int) -> bool:
    """Write `path` with `mode` unless it exists, atomically: the text goes to a temp file first and is
    linked into place, so a reader never sees half of it and of two writers one wins (False for the
    other, which then reads the winner's)."""
    tmp = _written_temp(path, text, mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def replace(path: Path, text: str, mode: int) -> None:
    """Write `path` with `mode` in place of what it holds, atomically (a temp file renamed over it)."""
    tmp = _written_temp(path, text, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _written_temp(path: Path, text: str, mode: int) -> str:
    """A temp file beside `path` holding `text` with `mode` (set on the file, whatever the umask), on disk."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp
