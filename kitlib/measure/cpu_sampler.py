"""System-wide CPU utilization of this host from /proc/stat over an interval.

The host's /proc/stat sees every process, also those in containers and the QEMU threads of VMs,
so one method measures every environment (the paper used `perf stat -a`).
"""

from __future__ import annotations

from pathlib import Path

METHOD = "/proc/stat busy share of the sampled CPUs over the measured interval"


def _snapshot(cpus: list[int] | None, stat: Path = Path("/proc/stat")) -> tuple[int, int]:
    """(total, idle) jiffies of all CPUs, or summed over the given ones."""
    wanted = {"cpu"} if not cpus else {f"cpu{c}" for c in cpus}
    total = idle = 0
    for line in stat.read_text().splitlines():
        name, *values = line.split()
        if name in wanted:
            fields = [int(v) for v in values]
            total += sum(fields[:8])
            idle += fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return total, idle


class CpuSampler:
    """`with CpuSampler(cpus) as cpu: …` then `cpu.utilization`: % busy of those CPUs (all if None).

    Sampling the system under test's own CPUs keeps the load generator out when both share a host
    (they are pinned to disjoint CPUs)."""

    def __init__(self, cpus: list[int] | None = None) -> None:
        self.cpus = list(cpus) if cpus else None
        self.utilization: float | None = None
        self._start = (0, 0)

    def __enter__(self) -> CpuSampler:
        self._start = _snapshot(self.cpus)
        return self

    def __exit__(self, *exc_info: object) -> None:
        total, idle = _snapshot(self.cpus)
        spent = total - self._start[0]
        self.utilization = 100.0 * (spent - (idle - self._start[1])) / spent if spent > 0 else None
