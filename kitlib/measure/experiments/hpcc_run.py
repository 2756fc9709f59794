"""Running hpcc (HPL, STREAM, RandomAccess) with Open MPI inside any environment, and sizing rules.

The experiments measure with the kit's own programs (`programs`); hpcc stays for the side-by-side of
their STREAM with hpcc's (`benchmarks/stream_side_by_side.py`) and for runs recorded before them.

Open MPI is told to use shared memory within the node (btl self,vader, no single-copy mechanism
that containers forbid) and that running as root is intended, so no run prints transport
warnings; the mpirun output is kept as its own raw file so that can be checked.
"""

from __future__ import annotations

import math

from kitlib.measure.environments.base import Environment

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


def n_for_memory(mem_bytes: int, fraction: float, cap: int) -> int:
    """HPL N filling `fraction` of the memory (8 N² bytes), capped for short profiles."""
    return int(min(cap, math.sqrt(fraction * mem_bytes / 8)) // 100 * 100)


def huge_pages(env: Environment) -> str:
    out = env.run(
        ["sh", "-c", "cat /sys/kernel/mm/transparent_hugepage/enabled; grep HugePages_Total /proc/meminfo"],
        timeout=30,
        check=False,
    ).output.split("\n")
    return "; ".join(line.strip() for line in out if line.strip())
