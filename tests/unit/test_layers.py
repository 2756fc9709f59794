"""The layers of kitlib are its folders, and imports run one way, so a reader can follow a parameter from
a notebook down to the host without ever going back up:

    kitlib/core/      the foundation: errors, paths, records, statistics, host ids, processes, the rules
                      that judge a point (interference, steady state, sequential looks)
    kitlib/specs/     what each experiment is: parameters, profiles, presets, schema; environment labels
    kitlib/results/   reading results folders, upgrading older formats in memory
    kitlib/measure/   the host, image, VMs, environments, peers, workloads, parsers, plans, store, runner
    kitlib/analyse/   figures, claims, statistics, tables, explorer, the course
    kitlib/*.py       the face: cli, reproduce, notebooks, progress (it may use every folder)

A folder imports only itself and the folders above it in this list, `measure` and `analyse` never each
other; no two folders import each other, nor a folder and one inside it; inside `measure` the steps run
from the host up to the runner (`measure/run`).
Function-local imports of kitlib modules are counted: the number may only go down.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import kitlib

ROOT = Path(kitlib.__file__).parent

#: folder -> the folders its modules may import (itself included)
FOLDERS = {
    "kitlib.core": {"kitlib.core"},
    "kitlib.specs": {"kitlib.core", "kitlib.specs"},
    "kitlib.results": {"kitlib.core", "kitlib.specs", "kitlib.results"},
    "kitlib.measure": {"kitlib.core", "kitlib.specs", "kitlib.results", "kitlib.measure"},
    "kitlib.analyse": {"kitlib.core", "kitlib.specs", "kitlib.results", "kitlib.analyse"},
}
FACE = "kitlib"

#: inside `measure`, module-name prefix -> step (the longest matching prefix decides); a step imports
#: only its own and lower steps
MEASURE_STEPS = {
    "kitlib.measure": 3,  # parsers, plans, store, provenance, estimates, capacity probes, clean-up
    "kitlib.measure.host": 1,  # logged commands, links, SSH, engines, free ports
    "kitlib.measure.image": 1,
    "kitlib.measure.inventory": 1,
    "kitlib.measure.cpu_sampler": 1,
    "kitlib.measure.vm.qemu": 1,
    "kitlib.measure.vm.libvirt": 1,
    "kitlib.measure.environments": 2,  # places: environments, VMs, peers, CPU and interrupt placement
    "kitlib.measure.vm": 2,
    "kitlib.measure.irq": 2,
    "kitlib.measure.cpus": 2,
    "kitlib.measure.peer": 2,
    "kitlib.measure.experiments": 4,  # what each experiment runs, on the places below
    "kitlib.measure.run": 5,  # execution: the runner, plan files and the checks before a run
}

#: function-local kitlib imports today; lower it when you hoist some, never raise it
LOCAL_IMPORTS_AT_MOST = 17

#: what a notebook that only reads records must not load: the measuring folder and its clients
MEASURING = ("kitlib.measure", "docker", "fabric", "paramiko", "invoke")


def module_names() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = module_names()


def folder_layer(module: str) -> str:
    """The top folder a module lies in (`kitlib.measure.vm.qemu` -> `kitlib.measure`), or the face."""
    return next((f for f in FOLDERS if module == f or module.startswith(f + ".")), FACE)


def folder(module: str) -> str:
    """The folder a module's file lies in, as a dotted name (a package's __init__ lies in its own)."""
    return ".".join(MODULES[module].relative_to(ROOT.parent).parent.parts)


def step(module: str) -> int:
    prefix = max((p for p in MEASURE_STEPS if module == p or module.startswith(p + ".")), key=len)
    return MEASURE_STEPS[prefix]


def resolve(name: str) -> str | None:
    """The kitlib module an imported name lives in (`kitlib.core.stats.ratio_ci` -> `kitlib.core.stats`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path) -> tuple[set[str], set[str], int]:
    """(kitlib modules imported at module level, those imported inside functions, how many such imports)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
    local: set[str] = set()
    nested = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found = {resolve(n) for n in names if n.startswith("kitlib")} - {None}
        if not found:
            continue
        if node.col_offset == 0:
            top |= found
        else:
            local |= found
            nested += 1
    return top, local, nested


EDGES = {
    (module, target)
    for module, path in MODULES.items()
    for target in set().union(*imports(path)[:2])
    if target != module
}


def test_imports_run_down_the_folders():
    upward = [
        f"{module} ({folder_layer(module)}) imports {target} ({folder_layer(target)})"
        for module, target in sorted(EDGES)
        if folder_layer(module) != FACE and folder_layer(target) not in FOLDERS[folder_layer(module)]
    ]
    assert upward == []


def test_no_two_folders_import_each_other():
    """No two folders import each other: not side by side (`measure/vm` and `measure/environments`,
    `measure` and `analyse`), and not a folder and one inside it (`measure` and `measure/experiments`)."""
    between = {(folder(a), folder(b)) for a, b in EDGES if folder(a) != folder(b)}
    both_ways = sorted((a, b) for a, b in between if (b, a) in between and a < b)
    assert both_ways == []


def test_inside_measure_the_steps_run_up():
    backwards = [
        f"{module} (step {step(module)}) imports {target} (step {step(target)})"
        for module, target in sorted(EDGES)
        if folder_layer(module) == folder_layer(target) == "kitlib.measure" and step(target) > step(module)
    ]
    assert backwards == []


def test_analysis_loads_nothing_that_measures():
    """Every module of core, specs, results and analyse imported in a fresh interpreter: no module of
    `kitlib.measure` and no Docker or SSH client is loaded, so a course laptop reading `data/sample`
    needs none of them."""
    readers = sorted(
        m for m in MODULES if folder_layer(m) in ("kitlib.core", "kitlib.specs", "kitlib.results", "kitlib.analyse")
    )
    script = (
        "import importlib, sys\n"
        f"for name in {readers!r}:\n"
        "    importlib.import_module(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    names = loaded.stdout.split()
    assert "kitlib.analyse.claims" in names and "kitlib.analyse.figures" in names and len(readers) > 50
    measuring = [n for n in names if any(n == m or n.startswith(m + ".") for m in MEASURING)]
    assert measuring == []


def test_every_folder_is_a_layer_and_the_face_is_flat():
    """A new folder is given its place in FOLDERS; the face is the package's own top-level modules."""
    face = [m for m in MODULES if folder_layer(m) == FACE]
    assert all(m == "kitlib" or m.count(".") == 1 for m in face), face
    assert {folder_layer(m) for m in MODULES} == set(FOLDERS) | {FACE}


def test_function_local_imports_only_go_down_in_number():
    nested = sum(imports(path)[2] for path in MODULES.values())
    assert nested <= LOCAL_IMPORTS_AT_MOST, f"{nested} function-local kitlib imports (at most {LOCAL_IMPORTS_AT_MOST})"


def test_reading_notebooks_import_nothing_that_measures():
    """The analysis notebooks and the course's chapters read records only: none of their cells imports
    `kitlib.measure` (an experiment notebook, which measures, may)."""
    notebooks = sorted((ROOT.parent / "notebooks").glob("analysis/*.ipynb")) + sorted(
        (ROOT.parent / "notebooks").glob("tour/*.ipynb")
    )
    assert len(notebooks) >= 9
    found = [
        f"{path.name}: {line.strip()}"
        for path in notebooks
        for cell in json.loads(path.read_text())["cells"]
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if "kitlib.measure" in line
    ]
    assert found == []
