"""The import layers of kitlib: a module imports only modules of its own layer or below, so a reader
can follow a parameter from a notebook down to the host without ever going back up.

    0 foundation   errors, paths, naming, records, procs, stats … (and `kitlib` itself: lazy API only)
    1 host         kitlib.host (logged commands, links, forwarding, start/stop), image, QEMU command lines
    2 places       environments, VMs, peers, remote engines, interrupt and CPU placement
    3 experiments  planning, parsers, experiments, store, provenance, clean-up, importers
    4 execution    runner, notebooks, progress, host checks
    5 analysis     figures, claims, analysis, explorer, tables, tour, paper against data, host against host,
                   the choice of the repetitions undecided claims need
    6 interface    cli, reproduce (measure, decide, analyse)

Function-local imports of kitlib modules are counted: the number may only go down.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kitlib

ROOT = Path(kitlib.__file__).parent

#: module-name prefix -> layer; the longest matching prefix decides
LAYERS = {
    "kitlib": 0,
    "kitlib.errors": 0,
    "kitlib.paths": 0,
    "kitlib.parameters": 0,
    "kitlib.naming": 0,
    "kitlib.records": 0,
    "kitlib.procs": 0,
    "kitlib.ports": 0,
    "kitlib.signals": 0,
    "kitlib.services": 0,
    "kitlib.hostid": 0,
    "kitlib.hostfacts": 0,
    "kitlib.record_files": 0,
    "kitlib.stats": 0,
    "kitlib.tool_versions": 0,
    "kitlib.ssh": 0,
    "kitlib.ssh_files": 0,
    "kitlib.numa": 0,
    "kitlib.inventory": 0,
    "kitlib.cpu_sampler": 0,
    "kitlib.interference": 0,
    "kitlib.timing": 0,
    "kitlib.schema": 0,
    "kitlib.caches": 0,
    "kitlib.latency_analysis": 0,
    "kitlib.steady": 0,
    "kitlib.sequential": 0,
    "kitlib.host": 1,
    "kitlib.image": 1,
    "kitlib.vm.qemu": 1,
    "kitlib.vm.libvirt": 1,
    "kitlib.environments": 2,
    "kitlib.vm": 2,
    "kitlib.docker_remote": 2,
    "kitlib.irq": 2,
    "kitlib.cpus": 2,
    "kitlib.peer": 2,
    "kitlib.testhost": 2,
    "kitlib.planning": 3,
    "kitlib.plan_file": 3,
    "kitlib.parsers": 3,
    "kitlib.experiments": 3,
    "kitlib.store": 3,
    "kitlib.formats": 3,
    "kitlib.provenance": 3,
    "kitlib.cleanup": 3,
    "kitlib.estimate": 3,
    "kitlib.capacity": 3,
    "kitlib.importers": 3,
    "kitlib.runner": 4,
    "kitlib.notebooks": 4,
    "kitlib.notebook_cells": 4,
    "kitlib.progress": 4,
    "kitlib.plan_view": 4,
    "kitlib.hostcheck": 4,
    "kitlib.preflight": 4,
    "kitlib.figures": 5,
    "kitlib.figures.net_block": 5,
    "kitlib.figures.latency": 5,
    "kitlib.figures.mysql": 5,
    "kitlib.figures.placement": 5,
    "kitlib.figures.scaleout": 5,
    "kitlib.claims": 5,
    "kitlib.analysis": 5,
    "kitlib.drift": 5,
    "kitlib.replicas": 5,
    "kitlib.explorer": 5,
    "kitlib.littles_law": 5,
    "kitlib.tables": 5,
    "kitlib.reference": 5,
    "kitlib.paper_vs_data": 5,
    "kitlib.against": 5,
    "kitlib.tour": 5,
    "kitlib.stability": 5,
    "kitlib.adaptive": 5,
    "kitlib.reproduce": 6,
    "kitlib.cli": 6,
}

#: function-local kitlib imports today; lower it when you hoist some, never raise it
LOCAL_IMPORTS_AT_MOST = 24


def module_names() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = module_names()


def layer(module: str) -> int:
    prefix = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[prefix]


def resolve(name: str) -> str | None:
    """The kitlib module an imported name lives in (`kitlib.host.commands.run` -> `kitlib.host.commands`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(path: Path) -> tuple[set[str], int]:
    """(kitlib modules imported at module level, count of kitlib imports inside functions)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
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
            nested += 1
    return top, nested


def test_every_module_has_a_layer():
    assert all(any(m == p or m.startswith(p + ".") for p in LAYERS) for m in MODULES)


def test_no_module_imports_a_module_above_it():
    upward = [
        f"{module} (layer {layer(module)}) imports {target} (layer {layer(target)})"
        for module, path in MODULES.items()
        for target in imports(path)[0]
        if target != module and layer(target) > layer(module)
    ]
    assert upward == []


def test_function_local_imports_only_go_down_in_number():
    nested = sum(imports(path)[1] for path in MODULES.values())
    assert nested <= LOCAL_IMPORTS_AT_MOST, f"{nested} function-local kitlib imports (at most {LOCAL_IMPORTS_AT_MOST})"
