"""fio `--output-format=json`: per job and direction, bandwidth, IOPS and completion latency.

Lines fio prints before the JSON (warnings) are skipped. Bandwidth is in MB/s (10^6 bytes),
latencies in µs; completion-latency percentiles (`--percentile_list`) become `clat_percentile`
records, from which a CDF is drawn. A direction with no I/O gives no records; a direction whose
completion latencies fio did not report (`clat_ns` absent) gives no latency records, never a 0.
"""

from __future__ import annotations

from typing import Any

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import numbers, ranges

TOOL = "fio"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    start = text.find("{")
    if start < 0:
        raise ParseError(TOOL, source, "no JSON in the output")
    document = numbers.load_json(text[start:], TOOL, source)
    try:
        jobs = document["jobs"]
        found = [m for job in jobs for m in _job(job, source)]
    except (KeyError, TypeError, AttributeError) as exc:
        raise ParseError(TOOL, source, f"not fio's JSON layout (at {exc!r})") from None
    if not found:
        raise ParseError(TOOL, source, "no job did any I/O")
    return found


def _job(job: dict[str, Any], source: str) -> list[Measurement]:
    if job["error"]:
        raise ParseError(TOOL, source, f"job {job.get('jobname')} failed with error {job['error']}")
    found: list[Measurement] = []
    for direction in ("read", "write"):
        part = job[direction]
        if not numbers.checked(part["total_ios"], TOOL, source, f"{direction} total_ios"):
            continue
        dims = {"job": str(job["jobname"]), "direction": direction}
        where = f"{job['jobname']} {direction}"
        found += [
            Measurement(
                "bandwidth", numbers.checked(part["bw_bytes"], TOOL, source, f"{where} bw_bytes") / 1e6, "MB/s", dims
            ),
            Measurement("iops", numbers.checked(part["iops"], TOOL, source, f"{where} iops"), "IOPS", dims),
        ]
        clat = part.get("clat_ns")
        if clat is None:
            continue
        if "mean" in clat:
            mean = numbers.checked(clat["mean"], TOOL, source, f"{where} clat mean")
            found.append(Measurement("clat_mean", mean / 1000.0, "us", dims))
        for percentile, value in (clat.get("percentile") or {}).items():
            pct = numbers.number(percentile, TOOL, source, f"{where} percentile")
            ns = numbers.checked(value, TOOL, source, f"{where} clat percentile {percentile}")
            found.append(Measurement("clat_percentile", ns / 1000.0, "us", {**dims, "percentile": pct}))
    return found
