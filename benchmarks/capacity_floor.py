"""How often the capacity probes call an undisturbed point slowed on this host (prints the figures).

The probes of a quiet machine, taken back to back as a run takes them around its points (one before,
one after), with nothing else running: every point they flag is a false alarm, measured again for
nothing and, where all its attempts are flagged, left out of the claims. Printed for the rule's fixed
90% floor (and 111% ceiling) and for the floor the probes' own spread gives
(`interference.Rule.capacity_floor`): the usual figure and the spread are the run's so far, as the runner
reads them (`capacity.RunCapacity`). Run:
    PYTHONPATH=$PWD python benchmarks/capacity_floor.py [points] [cpu|memory|wakeup]
"""

from __future__ import annotations

import sys
import time

from kitlib.core.interference import Rule
from kitlib.measure import capacity, cpus


def flagged(points: int, kind: str) -> None:
    probes = capacity.RunCapacity(cpus.available_cpus())
    fixed_rule, adapted_rule = Rule(capacity_outlier_spreads=None), Rule()
    fixed = adapted = 0
    started = time.monotonic()
    for _ in range(points):
        before = probes.before(kind)
        after = probes.after(kind)
        if before is None or after is None:
            sys.exit(f"no {kind} probe on this host (no C compiler or OpenBLAS)")
        share, spread = probes.share_pct(kind, before, after), probes.spread_pct(kind)
        fixed += bool(fixed_rule.capacity_reasons(share))
        adapted += bool(adapted_rule.capacity_reasons(share, spread))
    seconds = time.monotonic() - started
    spread = probes.spread_pct(kind)
    print(f"{kind} probes on CPUs {probes.cpus}: {points} undisturbed points, {seconds / points:.2f} s of probes each")
    print(f"usual figure {probes.usual(kind):.4g}, spread {spread}% (MAD scaled to a standard deviation)")
    print(f"fixed floor 90% / ceiling 111%: {fixed} of {points} points flagged ({100 * fixed / points:.0f}%)")
    floor, ceiling = adapted_rule.capacity_floor(spread), adapted_rule.capacity_ceiling(spread)
    print(
        f"floor from the spread ({floor}% / {ceiling}% at the end): {adapted} of {points} points flagged "
        f"({100 * adapted / points:.0f}%)"
    )


if __name__ == "__main__":
    flagged(int(sys.argv[1]) if len(sys.argv) > 1 else 60, sys.argv[2] if len(sys.argv) > 2 else capacity.CPU)
