"""The kit's own measuring programs (kit-stream, kit-gups, kit-linpack), from C sources it ships.

No Debian package runs STREAM's four kernels, RandomAccess or the shared-memory LINPACK alone
(hpcc runs its whole suite to report any one of them), so the kit carries small programs written to
their published definitions. The benchmark image builds them (`kitlib/image/src/build.sh`), so every
container, VM guest and system container has them in /usr/local/bin; an environment without them
(the host itself, a remote host) gets the same sources built with its own C compiler when a run
prepares it. Every program prints its source's digest, checked against the sources shipped here, so a
record never comes from a program built from other source.
"""

from __future__ import annotations

import hashlib
import shlex

from kitlib.core.errors import EnvironmentUnavailable
from kitlib.measure.environments.base import Environment, write_text
from kitlib.measure.image import SOURCES

#: program name -> its C source file
PROGRAMS = {"kit-stream": "kit_stream.c", "kit-gups": "kit_gups.c", "kit-linpack": "kit_linpack.c"}
#: what an environment needs to build them
BUILD_NEEDS = "a C compiler (cc), OpenMP and OpenBLAS (Debian: gcc libc6-dev libopenblas-openmp-dev)"


def source_digest(name: str) -> str:
    """The 16 hex digits `build.sh` compiles into the program (sha256 of its source)."""
    return hashlib.sha256((SOURCES / PROGRAMS[name]).read_bytes()).hexdigest()[:16]


def _installed(env: Environment, name: str) -> str | None:
    found = env.run(["sh", "-c", 'command -v "$1"', "sh", name], timeout=30, check=False)
    path = found.output.strip().splitlines()[-1:] if found.returncode == 0 else []
    return path[0] if path and path[0].startswith("/") else None


def ensure(env: Environment, name: str) -> str:
    """The path of program `name` in `env`: the image's, else built now into the environment's scratch."""
    if name not in PROGRAMS:
        raise KeyError(name)
    installed = _installed(env, name)
    if installed:
        return installed
    folder = f"{env.data_dir}/kit-programs"
    for path in sorted(SOURCES.iterdir()):
        write_text(env, f"{folder}/src/{path.name}", path.read_text(), timeout=30)
    built = env.run(["sh", f"{folder}/src/build.sh", f"{folder}/bin"], timeout=300, check=False)
    if built.returncode != 0:
        raise EnvironmentUnavailable(
            f"{env.label}: cannot build the kit's measuring programs; it needs {BUILD_NEEDS}. "
            f"`sh build.sh` said:\n{built.output.strip()[-1500:]}"
        )
    return f"{folder}/bin/{name}"


def check_source(name: str, output: str, where: str) -> None:
    """Refuse output of a program built from other source than the one shipped (an older image)."""
    first = output.lstrip().split("\n", 1)[0].split()
    expected = source_digest(name)
    if first[:2] != [name, "source"] or first[2:3] != [expected]:
        said = shlex.join(first[:3]) if first else "nothing"
        raise EnvironmentUnavailable(
            f"{where}: {name} is not built from this kit's source (expected `{name} source {expected}`, it says "
            f"`{said}`): rebuild the benchmark image or remove the stale program"
        )
