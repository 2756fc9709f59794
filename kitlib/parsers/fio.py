"""fio `--output-format=json`: per job and direction, bandwidth, IOPS and completion latency.

Lines fio prints before the JSON (warnings) are skipped. Bandwidth is in MB/s (10^6 bytes),
latencies in µs; completion-latency percentiles (`--percentile_list`) become `clat_percentile`
records, from which a CDF is drawn. A direction with no I/O gives no records.
"""

from __future__ import annotations

import json

from kitlib.errors import ParseError
from kitlib.records import Measurement

TOOL = "fio"


def parse(text: str, source: str) -> list[Measurement]:
    start = text.find("{")
    if start < 0:
        raise ParseError(TOOL, source, "no JSON in the output")
    try:
        document = json.loads(text[start:])
    except ValueError as exc:
        raise ParseError(TOOL, source, f"JSON does not parse ({exc}); truncated output?") from None
    jobs = document.get("jobs")
    if not jobs:
        raise ParseError(TOOL, source, "no jobs in the JSON")
    found: list[Measurement] = []
    for job in jobs:
        if job.get("error"):
            raise ParseError(TOOL, source, f"job {job.get('jobname')} failed with error {job['error']}")
        for direction in ("read", "write"):
            part = job.get(direction) or {}
            if not part.get("total_ios"):
                continue
            dims = {"job": job.get("jobname"), "direction": direction}
            clat = part.get("clat_ns") or {}
            found += [
                Measurement("bandwidth", part["bw_bytes"] / 1e6, "MB/s", dims),
                Measurement("iops", float(part["iops"]), "IOPS", dims),
                Measurement("clat_mean", clat.get("mean", 0.0) / 1000.0, "us", dims),
            ]
            for percentile, value in (clat.get("percentile") or {}).items():
                found.append(
                    Measurement("clat_percentile", value / 1000.0, "us", {**dims, "percentile": float(percentile)})
                )
    if not found:
        raise ParseError(TOOL, source, "no job did any I/O")
    return found
