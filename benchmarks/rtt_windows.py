"""What the peer's reduction of sockperf's full log costs at the `paper` profile's length.

A 60-s sockperf point logs about a million messages (some 18,000 a second on a 2-core guest). The
peer reads the log as it streams by (`kitlib/core/services/rtt_windows.py`), so its memory should
not grow with the log. The log is built from a real captured one (its rows repeated with shifted
times), then the program runs as a peer runs it; prints its seconds and peak resident memory for a
short and a long log, and their ratios.
Run: .venv/bin/python benchmarks/rtt_windows.py [messages]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kitlib.core import services

REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "sockperf-full-log" / "udp-mps400-t2.log"
HEADER = "packet, txTime(sec), rxTime(sec), rtt(usec)"
#: seconds between sends in the built log: 18,000 messages a second, as on the machine the kit was measured
SPACING_S = 1 / 18000


def build(messages: int, path: Path) -> None:
    """A log of `messages` rows in sockperf's format: the real log's summary, its round trips repeated."""
    lines = REAL.read_text().splitlines()
    start = lines.index(HEADER)
    summary = [line.replace("ReceivedMessages=620", f"ReceivedMessages={messages}") for line in lines[: start + 1]]
    rtts = [line.split(",")[3].strip() for line in lines[start + 1 :] if not line.startswith("---")]
    with path.open("w") as out:
        out.write("\n".join(summary) + "\n")
        for i in range(messages):
            sent = 2.4 + i * SPACING_S
            rtt = rtts[i % len(rtts)]
            out.write(f"{i}, {sent:.9f}, {sent + float(rtt) / 1e6:.9f}, {rtt}\n")
        out.write("------------------------------\n")


def run(path: Path) -> tuple[float, float]:
    """Seconds and peak resident MiB of one run of the program on `path`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(services.command("rtt_windows", path, 0.25), capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert done.stdout.endswith("kit-rtt-windows end\n")
    return seconds, max(peak, before) / 1024


def main(messages: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        short, long = Path(folder) / "short.log", Path(folder) / "long.log"
        build(messages // 20, short)
        build(messages, long)
        # the short log first: RUSAGE_CHILDREN's peak is the largest child's so far
        figures = {"short": run(short), "long": run(long)}
    for name, count in (("short", messages // 20), ("long", messages)):
        seconds, mib = figures[name]
        rate = count / seconds
        print(f"{name:5} {count:>9,} messages: {seconds:6.2f} s, {rate:>10,.0f} messages/s, peak {mib:6.1f} MiB")
    time_ratio = figures["long"][0] / figures["short"][0]
    memory_ratio = figures["long"][1] / figures["short"][1]
    print(f"long/short: time {time_ratio:.1f}x, peak memory {memory_ratio:.2f}x (20x the messages)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_080_000)
