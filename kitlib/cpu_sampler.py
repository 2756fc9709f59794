"""System-wide CPU utilization of this host from /proc/stat over an interval.

The host's /proc/stat sees every process, also those in containers and the QEMU threads of VMs,
so one method measures every environment (the paper used `perf stat -a`).
"""

from __future__ import annotations

from pathlib import Path

METHOD = "/proc/stat all-CPU busy share over the measured interval"


def _snapshot(stat: Path = Path("/proc/stat")) -> tuple[int, int]:
    fields = [int(v) for v in stat.read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]), idle


class CpuSampler:
    """`with CpuSampler() as cpu: …` then `cpu.utilization` (% of all CPUs busy)."""

    def __init__(self) -> None:
        self.utilization: float | None = None
        self._start = (0, 0)

    def __enter__(self) -> CpuSampler:
        self._start = _snapshot()
        return self

    def __exit__(self, *exc_info: object) -> None:
        total, idle = _snapshot()
        spent = total - self._start[0]
        self.utilization = 100.0 * (spent - (idle - self._start[1])) / spent if spent > 0 else None
