"""Running hpcc (HPL, STREAM, RandomAccess) with Open MPI inside any environment.

Open MPI is told to use shared memory within the node (btl self,vader, no single-copy mechanism
that containers forbid) and that running as root is intended, so no run prints transport
warnings; the mpirun output is kept as its own raw file so that can be checked.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from kitlib.environments.base import Environment

MPI_ENV = [
    "OMPI_ALLOW_RUN_AS_ROOT=1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
    "OMPI_MCA_btl=self,vader",
    "OMPI_MCA_btl_vader_single_copy_mechanism=none",
    "OMPI_MCA_rmaps_base_oversubscribe=1",
    "OMP_NUM_THREADS=1",
]
INPUT_TEMPLATE = """HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
{nb}          NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""


def grid(ranks: int) -> tuple[int, int]:
    """P × Q = ranks with P ≤ Q as close to square as the factors allow."""
    p = max(d for d in range(1, int(math.isqrt(ranks)) + 1) if ranks % d == 0)
    return p, ranks // p


def input_file(n: int, ranks: int, nb: int = 128) -> str:
    p, q = grid(ranks)
    return INPUT_TEMPLATE.format(n=n, nb=nb, p=p, q=q)


def n_for_stream(llc_bytes: int, ranks: int, multiple: float) -> int:
    """HPL N whose STREAM arrays (hpcc: N²/(3·ranks) doubles each) hold `multiple` × the last-level cache."""
    doubles = multiple * llc_bytes / 8
    return int(math.ceil(math.sqrt(doubles * 3 * ranks) / 100.0) * 100)


#: largest derived HPL N under software emulation: HPL there runs at ~0.1 GFLOPS, so the N of a
#: real machine (thousands) would take hours; 2000 takes about a minute
EMULATED_N_CAP = 2000


def bounded_n(env: Environment, derived: int) -> tuple[int, dict[str, Any]]:
    """`derived` where the CPU is real; under emulation at most EMULATED_N_CAP, with facts saying so
    (an N the user set explicitly is never passed through here)."""
    if not env.emulated or derived <= EMULATED_N_CAP:
        return derived, {}
    warnings.warn(
        f"{env.label}: software emulation, so HPL N {derived} (derived from the hardware) is capped at "
        f"{EMULATED_N_CAP}; pass -p hpl_n N to choose it yourself",
        stacklevel=2,
    )
    return EMULATED_N_CAP, {"hpl_n_derived": derived, "hpl_n_capped_by": "software emulation"}


def n_for_memory(mem_bytes: int, fraction: float, cap: int) -> int:
    """HPL N filling `fraction` of the memory (8 N² bytes), capped for short profiles."""
    return int(min(cap, math.sqrt(fraction * mem_bytes / 8)) // 100 * 100)


def run(env: Environment, n: int, *, prefix: list[str] | None = None, timeout: float = 1800) -> dict[str, str]:
    """Run hpcc once in a fresh folder on the environment's storage; raw mpirun output and hpccoutf.txt."""
    ranks = len(env.layout.sut_cpus)
    folder = f"{env.data_dir}/hpcc-{n}"
    setup = (
        f"rm -rf {folder} && mkdir -p {folder} && cat > {folder}/hpccinf.txt <<'KIT_EOF'\n{input_file(n, ranks)}KIT_EOF"
    )
    env.run(["sh", "-c", setup], timeout=60)
    command = ["env", *MPI_ENV, "mpirun", "--bind-to", "core", "-np", str(ranks), "hpcc"]
    mpirun = env.run(["sh", "-c", f'cd {folder} && exec "$@"', "sh", *(prefix or []), *command], timeout=timeout)
    result = env.run(["cat", f"{folder}/hpccoutf.txt"], timeout=60).output
    env.run(["rm", "-rf", folder], timeout=60)
    return {"mpirun": mpirun.output, "hpccoutf": result}


def read_number(env: Environment, command: str) -> int | None:
    out = env.run(["sh", "-c", command], timeout=30, check=False)
    try:
        return int(out.output.strip().split()[0])
    except (ValueError, IndexError):
        return None


def llc_bytes(env: Environment) -> int:
    """The largest cache the environment's CPU 0 reports (sysfs), in bytes."""
    sizes = env.run(["sh", "-c", "cat /sys/devices/system/cpu/cpu0/cache/index*/size"], timeout=30, check=False)
    best = 0
    for word in sizes.output.split():
        unit = {"K": 1024, "M": 1024**2}.get(word[-1:], 1)
        digits = word.rstrip("KM")
        if digits.isdigit():
            best = max(best, int(digits) * unit)
    return best or 32 * 1024**2


def memory_bytes(env: Environment) -> int:
    value = read_number(env, "awk '/MemAvailable/ {print $2 * 1024}' /proc/meminfo")
    return value or 2 * 1024**3


def huge_pages(env: Environment) -> str:
    out = env.run(
        ["sh", "-c", "cat /sys/kernel/mm/transparent_hugepage/enabled; grep HugePages_Total /proc/meminfo"],
        timeout=30,
        check=False,
    ).output.split("\n")
    return "; ".join(line.strip() for line in out if line.strip())
