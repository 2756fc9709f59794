"""How fast the store and the parsers are, so a `paper` profile (thousands of points) stays cheap.

Prints units saved per second, consolidation time per 1000 units and parsed files per second.
Run: .venv/bin/python benchmarks/store_and_parsers.py [units]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from kitlib.core.records import Measurement, place
from kitlib.measure import parsers
from kitlib.measure.store import RunStore, unit_key

SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "redis-benchmark" / "set-c8-p10.csv"


def bench_store(units: int) -> tuple[float, float]:
    measurements = [Measurement("throughput", 1.0e5 + i, "req/s", {"op": "mix"}) for i in range(16)]
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder))
        started = time.perf_counter()
        for i in range(units):
            records = place(
                measurements,
                experiment="redis",
                workload="redis",
                env="native",
                run_id="bench",
                repetition=i,
                params={"clients": i % 8},
            )
            store.save_ok(unit_key("native", {"clients": i % 8}, i, "redis"), records, {"env": "native"})
        saved = time.perf_counter() - started
        started = time.perf_counter()
        frame = store.consolidate()
        consolidated = time.perf_counter() - started
        assert len(frame) == units * len(measurements)
    return units / saved, consolidated * 1000 / units


def bench_parser(repeat: int = 2000) -> float:
    text = SAMPLE.read_text()
    parse = parsers.get("redis-benchmark")
    started = time.perf_counter()
    for _ in range(repeat):
        parse(text, str(SAMPLE))
    return repeat / (time.perf_counter() - started)


def main() -> None:
    units = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rate, per_thousand = bench_store(units)
    print(f"store: {rate:,.0f} units saved/s ({units} units of 16 records)")
    print(f"store: consolidate {per_thousand:.3f} s per 1000 units")
    print(f"parser redis-benchmark: {bench_parser():,.0f} outputs/s")


if __name__ == "__main__":
    main()
