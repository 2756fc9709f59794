"""kit-stream against hpcc's STREAM on the same arrays, on this host, in interleaved pairs.

hpcc sizes its STREAM arrays from its HPL problem (VectorSize doubles per array and process); the
memory experiment used to read its StarSTREAM (every process on its own arrays) and SingleSTREAM
(one process alone). This runs hpcc once per pair at the N the memory experiment's rule gives, reads
its VectorSize, and runs kit-stream on the same arrays: one thread on VectorSize elements (against
SingleSTREAM) and one thread per rank on ranks x VectorSize elements (against StarSTREAM x ranks, the
system's figure). Prints per kernel the median of each side and the median ratio kit ÷ hpcc with its
min–max over the pairs. From the project root:

    PYTHONPATH=$PWD python benchmarks/stream_side_by_side.py [--pairs 3] [--ranks 2] [--llc-multiple 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from kitlib.core import caches
from kitlib.measure.experiments import hpcc_run
from kitlib.measure.image import SOURCES
from kitlib.measure.parsers import hpcc, kit_stream

KERNELS = ("Copy", "Scale", "Add", "Triad")


def run_hpcc(folder: Path, n: int, ranks: int) -> dict[str, float]:
    """(variant, kernel) rates in GB/s of one hpcc run, and its VectorSize."""
    work = folder / "hpcc"
    work.mkdir(exist_ok=True)
    (work / "hpccinf.txt").write_text(hpcc_run.input_file(n, ranks))
    env = {**os.environ, **dict(item.split("=", 1) for item in hpcc_run.MPI_ENV)}
    argv = ["mpirun", "--bind-to", "core", "-np", str(ranks), "hpcc"]
    subprocess.run(argv, cwd=work, env=env, check=True, capture_output=True, timeout=3600)
    found = hpcc.parse((work / "hpccoutf.txt").read_text(), str(work / "hpccoutf.txt"))
    rates = {f"{m.dims['variant']}/{m.dims['kernel']}": m.value for m in found if m.metric == "bandwidth"}
    rates["elements"] = next(m.value for m in found if m.metric == "vector_size")
    (work / "hpccoutf.txt").unlink()
    return rates


def run_kit(program: Path, elements: int, threads: int) -> dict[str, float]:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "true", "OMP_PLACES": "threads"}
    cpus = ",".join(str(c) for c in range(threads))
    out = subprocess.run(
        ["taskset", "-c", cpus, str(program), str(elements), "10"], env=env, check=True, capture_output=True, text=True
    ).stdout
    return {m.dims["kernel"]: m.value for m in kit_stream.parse(out, "kit-stream") if m.metric == "bandwidth"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--llc-multiple", type=float, default=4.0)
    args = parser.parse_args()
    llc = caches.last_level_total() or 32 * 2**20
    n = hpcc_run.n_for_stream(llc, args.ranks, args.llc_multiple)
    rows: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="kitlib-stream-sbs-") as scratch:
        folder = Path(scratch)
        subprocess.run(["sh", str(SOURCES / "build.sh"), str(folder / "bin")], check=True, capture_output=True)
        program = folder / "bin" / "kit-stream"
        for pair in range(args.pairs):
            reference = run_hpcc(folder, n, args.ranks)
            elements = int(reference["elements"])
            single = run_kit(program, elements, 1)
            system = run_kit(program, elements * args.ranks, args.ranks)
            for kernel in KERNELS:
                rows.setdefault(f"one process / Single {kernel}", []).append(
                    (reference[f"Single/{kernel}"], single[kernel])
                )
                rows.setdefault(f"all CPUs / Star x ranks {kernel}", []).append(
                    (reference[f"System/{kernel}"], system[kernel])
                )
            print(f"pair {pair + 1}/{args.pairs}: hpcc N {n}, VectorSize {elements}", flush=True)
    print(f"\nlast-level cache {llc / 2**20:g} MiB, {args.ranks} ranks, {args.pairs} pairs (hpcc, then kit-stream)")
    print(f"{'arrays and kernel':<34} {'hpcc GB/s':>10} {'kit GB/s':>10} {'kit/hpcc':>9} {'min-max':>13}")
    for name, pairs in rows.items():
        ratios = [kit / ref for ref, kit in pairs]
        hpcc_median, kit_median = statistics.median(r for r, _ in pairs), statistics.median(k for _, k in pairs)
        print(
            f"{name:<34} {hpcc_median:>10.2f} {kit_median:>10.2f}"
            f" {statistics.median(ratios):>9.3f} {min(ratios):>6.3f}-{max(ratios):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
