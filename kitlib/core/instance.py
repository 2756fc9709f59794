"""This machine's instance identity: what tells it from clones of its image, which share its
/etc/machine-id, its CPU model and its memory.

The kit writes a random id once per machine, outside the project and its results: root's in
/var/lib/kitlib/instance-id (root-owned, 0644, so every user of the machine reads the same one), a
user's own under $XDG_STATE_HOME/kitlib (0600) where root never wrote one. Beside it, root records
the DMI product UUID (readable by root alone), so a non-root reader gets the same facts; when root
finds another UUID than the one recorded, the file came with a cloned image and is written anew. The
cloud's instance id (cloud-init's, world-readable) is read each time. A file another user owns, or
that others may write, is refused.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from kitlib.core import owned_files
from kitlib.core.errors import KitError
from kitlib.core.hostid import INSTANCE_KEYS

SYSTEM_FILE = Path("/var/lib/kitlib/instance-id")
PRODUCT_UUID = Path("/sys/class/dmi/id/product_uuid")
#: cloud-init's id of this instance (a new one for each instance made from an image)
CLOUD_INSTANCE_ID = Path("/var/lib/cloud/data/instance-id")
#: what cloud-init writes where no cloud gave an id: the same on every machine
NO_CLOUD_IDS = {"iid-datasource-none", "nocloud", "none"}


def user_file() -> Path:
    """A user's own instance id: under $XDG_STATE_HOME (~/.local/state) as the XDG spec places state."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "kitlib" / "instance-id"


def collect(
    system_file: Path | None = None, product_uuid: Path | None = None, cloud: Path | None = None
) -> dict[str, Any]:
    """{instance_id, product_uuid, cloud_instance_id, file}: this machine's instance facts, the id file
    written where missing; {unavailable: why} with no ids where no file can be written or read."""
    system_file = system_file or SYSTEM_FILE
    facts: dict[str, Any] = {}
    try:
        facts = _id_file(system_file, product_uuid or PRODUCT_UUID)
    except (OSError, KitError) as exc:
        facts = {"unavailable": str(exc)[:300]}
    cloud_id = _read(cloud or CLOUD_INSTANCE_ID)
    facts["cloud_instance_id"] = cloud_id if cloud_id and cloud_id.lower() not in NO_CLOUD_IDS else None
    return facts


def _id_file(system_file: Path, product_uuid: Path) -> dict[str, Any]:
    """Root's file, made or renewed by root; else a user's own (root's where root wrote one)."""
    if os.geteuid() == 0:
        return _root_file(system_file, _read(product_uuid))
    found = owned_files.read_owned(system_file, 0)
    if found is not None:
        return {**_parse(system_file, found), "file": str(system_file)}
    return _own_file(user_file())


def _root_file(path: Path, uuid: str | None) -> dict[str, Any]:
    """Root's file: written once (0644), and anew where it records another machine's product UUID."""
    owned_files.own_dir(path.parent, 0o755)
    found = owned_files.read_owned(path, 0)
    if found is None:
        owned_files.create_once(path, _document(uuid), 0o644)
        found = owned_files.read_owned(path, 0) or ""
    facts = _parse(path, found)
    if uuid and facts.get("product_uuid") != uuid:  # the file came with an image cloned from another machine
        owned_files.replace(path, _document(uuid), 0o644)
        facts = _parse(path, owned_files.read_owned(path, 0) or "")
    return {**facts, "file": str(path)}


def _own_file(path: Path) -> dict[str, Any]:
    """A user's own file (0600, in a folder of theirs alone), written once."""
    owned_files.private_dir(path.parent)
    found = owned_files.read_owned(path, os.geteuid())
    if found is None:
        owned_files.create_once(path, _document(None), 0o600)
        found = owned_files.read_owned(path, os.geteuid()) or ""
    return {**_parse(path, found), "file": str(path)}


def _document(uuid: str | None) -> str:
    return json.dumps({"instance_id": secrets.token_hex(16), "product_uuid": uuid}) + "\n"


def _parse(path: Path, text: str) -> dict[str, Any]:
    """The file's {instance_id, product_uuid}; a file of any other content is refused."""
    try:
        document = json.loads(text)
        instance_id = str(document["instance_id"])
    except (ValueError, KeyError, TypeError):
        raise KitError(f"{path} holds no instance id the kit wrote: remove it and the kit writes a new one") from None
    if len(instance_id) != 32 or not all(c in "0123456789abcdef" for c in instance_id):
        raise KitError(f"{path} holds no instance id the kit wrote: remove it and the kit writes a new one")
    uuid = document.get("product_uuid")
    return {"instance_id": instance_id, "product_uuid": str(uuid) if uuid else None}


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def describe(facts: dict[str, Any] | None) -> str:
    """What the instance part of a host id is made of, in a few words (for `kit check`)."""
    if not facts or not any(facts.get(key) for key in INSTANCE_KEYS):
        why = (facts or {}).get("unavailable")
        return "no instance identity" + (f" ({why})" if why else "")
    parts = []
    if facts.get("instance_id"):
        parts.append(f"the kit's instance id {facts['instance_id'][:8]}… ({facts.get('file')})")
    parts.append(f"DMI product UUID {facts['product_uuid']}" if facts.get("product_uuid") else "no DMI product UUID")
    if facts.get("cloud_instance_id"):
        parts.append(f"cloud instance {facts['cloud_instance_id']}")
    return ", ".join(parts)
