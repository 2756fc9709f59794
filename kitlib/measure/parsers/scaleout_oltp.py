"""The load script of the OLTP scale-out: one sysbench run per database instance, all at once, one wall clock.

The script on the peer starts every client together and, when all have ended, prints each one's
sysbench output after a section line, then the wall time of the whole bundle:

    == instance 0
    SQL statistics: ...
        transactions:                        1900   (632.60 per sec.)
    ...
    == instance 1
    ...
    == elapsed 3.104211

Each section is checked by the sysbench parser and kept per instance (`instance` = 0, 1, …). The
aggregate (`instance` = `all`) counts every transaction of every client over that one wall time
(a client's count is its rate times its own run time, as sysbench computes the rate), so clients
that did not overlap cannot add up to more than the host did; errors and reconnects are summed.
"""

from __future__ import annotations

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import bundle, numbers, ranges, sysbench
from kitlib.specs.scaleout_oltp import AGGREGATE

TOOL = "kit-scaleout-oltp"
_SECTION = numbers.pattern(r"^== instance (\d+)\s*$")


def _sections(text: str, source: str) -> tuple[dict[int, str], float]:
    found, elapsed = bundle.split(text, source, TOOL, _SECTION, "== instance")
    sections: dict[int, str] = {}
    for head, output in found:
        instance = int(head[1])
        if instance in sections:
            raise ParseError(TOOL, source, f"instance {instance} appears twice")
        sections[instance] = output
    return dict(sorted(sections.items())), elapsed


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    sections, elapsed = _sections(text, source)
    found: list[Measurement] = []
    transactions = queries = 0.0
    counts = {"errors": 0.0, "reconnects": 0.0}
    for instance, output in sections.items():
        one = {m.metric: m for m in sysbench.parse(output, f"{source} (instance {instance})")}
        transactions += one["tps"].value * one["duration"].value
        queries += one["qps"].value * one["duration"].value
        for metric in counts:
            counts[metric] += one[metric].value
        found += [Measurement(m.metric, m.value, m.unit, {"instance": str(instance)}) for m in one.values()]
    total = {"instance": AGGREGATE}
    found += [
        Measurement("tps", transactions / elapsed, "transactions/s", total),
        Measurement("qps", queries / elapsed, "queries/s", total),
        Measurement("duration", elapsed, "s", total),
        Measurement("clients", float(len(sections)), "count", total),
        *(Measurement(metric, value, "count", total) for metric, value in counts.items()),
    ]
    return found


def intervals(text: str, source: str) -> tuple[list[float], float]:
    """The aggregate tps of each report interval: every client's `--report-interval` rate at that interval,
    added (the clients start together); intervals are kept up to the shortest client's last, and the
    clients must report at one interval."""
    sections, _ = _sections(text, source)
    series = [sysbench.intervals(output, f"{source} (instance {i})") for i, output in sections.items()]
    steps = {step for _, step in series}
    if len(steps) > 1:
        raise ParseError(TOOL, source, f"clients report at different intervals: {sorted(steps)}")
    length = min(len(values) for values, _ in series)
    return [sum(values[k] for values, _ in series) for k in range(length)], steps.pop()
