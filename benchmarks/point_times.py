"""Where a run's time goes: one point of each experiment on `native` (quick profile, one repetition),
timed as a whole `kit run --no-notebook`, beside the estimate the plan printed before it ran and the
tool's own share (the units' `tool_seconds`). Prints one line per experiment and the ratio measured ÷
estimated, so a drifting cost model shows. Run as root (the peer namespace) from the project root:

    PYTHONPATH=$PWD python benchmarks/point_times.py [--experiments cpu,memory,net,...] [--keep DIR]

Each experiment runs in a fresh results folder (a temporary one unless --keep), so nothing is resumed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kitlib.measure import estimate, experiments
from kitlib.measure.run.runner import plan_units

ROOT = Path(__file__).resolve().parent.parent
#: experiments whose quick profile runs on `native` alone, with their smallest sweep
ON_NATIVE = {
    "cpu": [],
    "memory": [],
    "net": [],
    "block": [],
    "redis": ["-p", "clients", "[8]"],
    "mysql": ["-p", "threads", "[4]"],
    "latency": ["-p", "parts", '["storage"]'],
}


def tool_seconds(run_root: Path) -> float:
    total = 0.0
    for unit in run_root.glob("units/*.json"):
        data = json.loads(unit.read_text())
        total += float(data.get("tool_seconds") or 0.0)
    return total


def time_one(name: str, extra: list[str], results: Path) -> tuple[float, float, float]:
    """(estimated s, measured wall s, tool s) of one repetition of `name` on native."""
    overrides = dict(zip(extra[1::3], (json.loads(v) for v in extra[2::3]), strict=True))
    plan = experiments.get(name).plan(environments=["native"], repetitions=1, **overrides)
    expected = estimate.estimate(plan, plan_units(plan)).total
    command = [sys.executable, "-m", "kitlib.cli", "run", name, "--env", "native", "--repetitions", "1"]
    started = time.monotonic()
    subprocess.run([*command, "--no-notebook", *extra], check=True, env={**os.environ, "KIT_RESULTS": str(results)})
    wall = time.monotonic() - started
    run_root = next((results / name).glob("*/"))
    return expected, wall, tool_seconds(run_root)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiments", default=",".join(ON_NATIVE))
    parser.add_argument("--keep", type=Path, help="keep the results here instead of a temporary folder")
    args = parser.parse_args()
    names = [n for n in args.experiments.split(",") if n]
    unknown = sorted(set(names) - set(ON_NATIVE))
    if unknown:
        parser.error(f"no native-only point for {unknown}; known: {', '.join(ON_NATIVE)}")
    rates = estimate.rates()
    print(f"rates: {rates.as_dict()}")
    print(f"{'experiment':<10} {'estimated':>10} {'measured':>10} {'tool':>8} {'measured/est':>13}")
    with tempfile.TemporaryDirectory(prefix="kitlib-point-times-") as scratch:
        base = args.keep or Path(scratch)
        for name in names:
            expected, wall, tool = time_one(name, ON_NATIVE[name], base / name)
            print(f"{name:<10} {expected:>9.1f}s {wall:>9.1f}s {tool:>7.1f}s {wall / expected:>12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
