"""kit-linpack (shared-memory LINPACK over OpenBLAS's dgesv, `kitlib/image/src/kit_linpack.c`):

    kit-linpack source 92c8238c4d28e80e
    blas OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64
    threads 2
    n 4000
    trials 3
    trial 1 seconds 1.040029 gflops 41.0553 residual 1.301132e-03 check pass
    trial 2 seconds 1.075445 gflops 39.7032 residual 1.301132e-03 check pass
    trial 3 seconds 1.154901 gflops 36.9717 residual 1.301132e-03 check pass
    end

Every trial solves the same matrix afresh. The point's GFLOPS is the mean of the trials after the
first (the first warms caches, pages and threads; with one trial, that trial), as a run of Intel's
LINPACK is summarised by its average; every trial's figure stays in the raw output.
"""

from __future__ import annotations

from statistics import fmean

from kitlib.core.errors import ParseError
from kitlib.core.records import Measurement
from kitlib.measure.parsers import ranges
from kitlib.measure.parsers.kit_programs import fields, lines, number

TOOL = "kit-linpack"
METHOD = "mean of the trials after the first (kit-linpack, LAPACK dgesv)"


@ranges.checked(TOOL)
def parse(text: str, source: str) -> list[Measurement]:
    rows = lines(text, TOOL, source)
    sizes = fields(rows, TOOL, source, ("n", "trials", "threads"))
    rates: list[float] = []
    for row in rows:
        if row[:1] != ["trial"]:
            continue
        if len(row) != 10 or row[2] != "seconds" or row[4] != "gflops" or row[9] != "pass":
            raise ParseError(TOOL, source, f"unexpected or failed trial: {' '.join(row)!r}")
        if number(row[1], TOOL, source, "trial number") != len(rates) + 1:
            raise ParseError(TOOL, source, f"trials out of order at {' '.join(row)!r}")
        rates.append(number(row[5], TOOL, source, f"trial {row[1]} gflops"))
    if not rates or len(rates) != sizes["trials"]:
        raise ParseError(TOOL, source, f"{len(rates)} trial line(s) where the run announced {sizes['trials']:g}")
    counted = rates[1:] or rates
    dims = {"benchmark": "LINPACK", "method": METHOD}
    return [
        Measurement("gflops", fmean(counted), "GFLOPS", dims),
        Measurement("trials_counted", float(len(counted)), "count", {"benchmark": "LINPACK"}),
    ]
