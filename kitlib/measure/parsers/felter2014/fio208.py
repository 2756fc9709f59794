"""fio 2.0.8 human-readable output (the authors ran it before fio had JSON output by default).

The header names each job group (`seq-read-1: (g=1): rw=read, bs=1M-1M/1M-1M, ioengine=libaio,
iodepth=1`); each group then reports per direction::

    random-read-16x8: (groupid=6, jobs=8): err= 0: pid=9550
      read : io=19699MB, bw=336178KB/s, iops=84044 , runt= 60002msec
        clat (usec): min=…, max=…, avg=1522.31, stdev=…

and ends with `Run status group N (all jobs):`. Every group the header announces must report its
directions and its run status, else the output is cut off and raises. Bandwidth is returned in MB/s of
10^6 bytes, the unit of the kit's own fio records (fio 2.0.8's KB is 1024 bytes); completion latency in
µs (fio prints usec or msec: msec are multiplied by 1000).
"""

from __future__ import annotations

import re

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers

TOOL = "fio 2.0.8"
_JOB = numbers.pattern(r"^(\S+): \(g=(\d+)\): rw=(\w+), bs=([0-9A-Za-z]+)-[^,]*, ioengine=(\w+), iodepth=(\d+)", re.M)
_GROUP = numbers.pattern(r"^(\S+): \(groupid=(\d+), jobs=(\d+)\): err=\s*(\d+)")
_DIRECTION = numbers.pattern(
    r"^\s+(read|write)\s*: io=[^,]+, bw=([0-9.]+)(KB|MB|B)/s, iops=(\d+)\s*, runt=\s*(\d+)msec"
)
_CLAT = numbers.pattern(r"^\s+clat \((usec|msec)\): min=\s*[0-9.]+[KM]?\s*, max=\s*[0-9.]+[KM]?\s*, avg=\s*([0-9.]+)")
_STATUS = numbers.pattern(r"^Run status group (\d+) \(all jobs\):", re.M)
_VERSION = numbers.pattern(r"^(fio-)?2\.0\.8$", re.M)
#: bytes per unit fio 2.0.8 prints bandwidth in (powers of 1024)
_BYTES = {"B": 1.0, "KB": 1024.0, "MB": 1024.0**2}


def parse(text: str, source: str) -> list[Measurement]:
    """iops, bandwidth (KB/s) and clat_mean (µs) per group and direction; dims: job, group, rw,
    block_size, iodepth, numjobs, direction."""
    if not _VERSION.search(text):
        raise ParseError(TOOL, source, "no '2.0.8' version line: not fio 2.0.8 text output")
    jobs: dict[int, tuple[str, str, str, int]] = {}
    for name, group, rw, bs, _engine, depth in _JOB.findall(text):
        jobs.setdefault(int(group), (name, rw, bs.lower(), int(depth)))
    if not jobs:
        raise ParseError(TOOL, source, "no job definitions in the header")
    found: list[Measurement] = []
    reported: set[int] = set()
    group, numjobs, direction = None, 0, None
    for line in text.splitlines():
        if match := _GROUP.match(line):
            group, numjobs, direction = int(match.group(2)), int(match.group(3)), None
            if int(match.group(4)) != 0:
                raise ParseError(TOOL, source, f"group {group} reports err={match.group(4)}")
            continue
        if group is None:
            continue
        if match := _DIRECTION.match(line):
            direction = match.group(1)
            name, rw, bs, depth = jobs[group]
            dims = {
                "job": name,
                "group": group,
                "rw": rw,
                "block_size": bs,
                "iodepth": depth,
                "numjobs": numjobs,
                "direction": direction,
            }
            found.append(Measurement("iops", float(match.group(4)), "IOPS", dims))
            rate = float(match.group(2)) * _BYTES[match.group(3)] / 1e6
            found.append(Measurement("bandwidth", rate, "MB/s", dims))
            reported.add(group)
        elif (match := _CLAT.match(line)) and direction is not None:
            factor = 1000.0 if match.group(1) == "msec" else 1.0
            found.append(Measurement("clat_mean", float(match.group(2)) * factor, "us", found[-1].dims))
            direction = None
    statuses = {int(g) for g in _STATUS.findall(text)}
    missing = sorted(set(jobs) - reported) + sorted(set(jobs) - statuses)
    if missing:
        raise ParseError(TOOL, source, f"job group(s) {sorted(set(missing))} report no result or run status (cut off)")
    return found
