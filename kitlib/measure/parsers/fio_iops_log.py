"""fio's `--write_iops_log` files of one point, as the kit collects them from the data directory.

    kit-fio-iops-log log_avg_msec=250 runtime_s=6
    == kit-fio_iops.1.log
    250, 126752, 0, 0, 0
    501, 134204, 0, 0, 0
    ...
    == end

Each file (one per job) follows a `==` line naming it; fio's lines are `time_ms, iops, direction, block
size, offset[, priority]`, the IOPS averaged over the window ending at time_ms. The header gives the
window and the run's length, the closing `== end` line says every file was copied: without it the
collection was cut and is refused. A job whose windows stop before the end of the run (but the last,
which the end of the run may cut), or that lacks more than `MAX_GAP_SHARE` of them, is refused too: a
window inside the run with no line is a stall (an emulated guest's, say), left out, never filled in.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import lines, numbers, ranges

TOOL = "fio-iops-log"
_HEADER = numbers.pattern(r"^kit-fio-iops-log log_avg_msec=(\d+) runtime_s=(\S+)$")
_FILE = numbers.pattern(r"^== (\S+\.log)$")
END = "== end"
#: windows a job may lack inside its run (a stall logs nothing) before its log counts as broken
MAX_GAP_SHARE = 0.1
HEADER = "kit-fio-iops-log log_avg_msec={avg_msec} runtime_s={runtime:g}"


def _jobs(text: str, source: str) -> tuple[int, float, dict[str, list[tuple[float, float, int]]]]:
    """(window ms, run seconds, file -> [(time_ms, iops, direction)]) of a complete collection."""
    header, body = lines.framed(text, _HEADER, END, TOOL, source, "collection", "kit-fio-iops-log")
    avg = numbers.count(header[1], TOOL, source, "log_avg_msec")
    runtime = numbers.positive(numbers.number(header[2], TOOL, source, "runtime_s"), TOOL, source, "runtime_s")
    if avg <= 0:
        raise ParseError(TOOL, source, "log_avg_msec must be positive")
    jobs: dict[str, list[tuple[float, float, int]]] = {}
    current = None
    for number, line in enumerate(body, start=2):
        named = _FILE.match(line)
        if named:
            if named[1] in jobs:
                raise ParseError(TOOL, source, f"{named[1]} appears twice")
            current = jobs.setdefault(named[1], [])
            continue
        if current is None:
            raise ParseError(TOOL, source, f"line {number} is before any '== <file>' line")
        fields = [f.strip() for f in line.split(",")]
        if len(fields) not in (5, 6):
            raise ParseError(TOOL, source, f"line {number} is not an fio log line: {line[:80]!r}")
        entry = (
            numbers.number(fields[0], TOOL, source, f"time on line {number}"),
            numbers.number(fields[1], TOOL, source, f"IOPS on line {number}"),
            numbers.count(fields[2], TOOL, source, f"direction on line {number}"),
        )
        _after(current, entry, number, source)
        current.append(entry)
    if not jobs or not any(jobs.values()):
        raise ParseError(TOOL, source, "no log lines")
    expected = int(runtime * 1000 // avg) - 1
    for name, entries in jobs.items():
        covered = {round(t / avg) for t, _, _ in entries}
        if max(covered) < expected or len(covered) < expected * (1 - MAX_GAP_SHARE):
            raise ParseError(
                TOOL,
                source,
                f"{name} covers {len(covered)} windows up to {max(covered)} of a {runtime:g} s run ({expected})",
            )
    return avg, runtime, jobs


def _after(entries: list[tuple[float, float, int]], entry: tuple[float, float, int], number: int, source: str) -> None:
    """fio logs each direction's windows in time order, one line each: a line at or before the last of its
    direction was given twice or moved."""
    earlier = next((t for t, _, direction in reversed(entries) if direction == entry[2]), None)
    if earlier is not None and entry[0] <= earlier:
        raise ParseError(TOOL, source, f"line {number}: time {entry[0]:g} ms is not after {earlier:g} ms")


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    """One record per log line: IOPS of one job and direction over the window ending at time_ms."""
    _, _, jobs = _jobs(text, source)
    return [
        Measurement("iops", iops, "IOPS", {"log": name, "time_ms": time_ms, "direction": direction})
        for name, entries in jobs.items()
        for time_ms, iops, direction in entries
    ]


def intervals(text: str, source: str) -> tuple[list[float], float]:
    """Total IOPS per window: every job's and direction's windows ending at the same time (within half a
    window) added, windows some job lacks (the last, cut by the end of the run) left out; and the window
    in seconds."""
    avg, _, jobs = _jobs(text, source)
    totals: dict[int, float] = {}
    writers: dict[int, set[tuple[str, int]]] = {}
    for name, entries in jobs.items():
        for time_ms, iops, direction in entries:
            window = round(time_ms / avg)
            totals[window] = totals.get(window, 0.0) + iops
            writers.setdefault(window, set()).add((name, direction))
    complete = max(len(w) for w in writers.values())
    return [totals[w] for w in sorted(totals) if len(writers[w]) == complete], avg / 1000.0
