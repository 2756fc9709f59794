"""The CPU caches as sysfs describes them: what STREAM's and RandomAccess's sizing rules start from.

McCalpin's rule sizes each STREAM array from the *total* last-level cache of the machine (all
sockets, all instances), not from one CPU's view of it: an L3 shared by the CPUs of one socket is
counted once, two sockets' L3s twice.
"""

from __future__ import annotations

from pathlib import Path

SYSFS_CPUS = Path("/sys/devices/system/cpu")
_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3}
#: the last-level cache assumed where sysfs reports none (a common server's)
FALLBACK_LLC = 32 * 1024**2


def size_bytes(text: str) -> int | None:
    """`32768K` / `32M` / `512` (bytes) as sysfs writes cache sizes; None for anything else."""
    text = text.strip()
    unit = _UNITS.get(text[-1:].upper(), 1)
    digits = text[:-1] if text[-1:].upper() in _UNITS else text
    return int(digits) * unit if digits.isdigit() else None


def last_level_total(root: Path = SYSFS_CPUS) -> int | None:
    """Bytes of the last-level cache summed over its distinct instances (one per set of CPUs sharing
    it); None where sysfs describes no cache (some VM guests, containers without /sys)."""
    instances: dict[tuple[int, str], int] = {}
    for index in root.glob("cpu[0-9]*/cache/index[0-9]*"):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = size_bytes((index / "size").read_text())
            shared = (index / "shared_cpu_list").read_text().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or size is None:
            continue
        instances[(level, shared)] = size
    if not instances:
        return None
    top = max(level for level, _ in instances)
    return sum(size for (level, _), size in instances.items() if level == top)
