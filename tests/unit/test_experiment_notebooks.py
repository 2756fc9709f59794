"""Experiment notebooks that teach: what is measured, how the paper did it, what it found, what to expect;
every parameter with a comment (papermill shows it as the parameter's help); the validated plan shown."""

from __future__ import annotations

import re

import nbformat
import pytest

from kitlib import specs
from kitlib.core import paths
from kitlib.measure import experiments
from kitlib.plan_view import plan_table

NOTEBOOKS = sorted((paths.notebooks_root() / "experiments").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_explains_its_experiment_and_every_parameter(path):
    notebook = nbformat.read(path, 4)
    intro = notebook.cells[0].source
    for heading in ("**What is measured.**", "**What to expect on a small machine.**"):
        assert heading in intro
    assert re.search(r"\*\*What the (paper|study) (found|said)\.\*\*", intro)
    parameters = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assignments = [line for line in parameters.source.splitlines() if re.match(r"^\w+ = ", line)]
    assert assignments and all(re.match(r"^\w+ = .+  # \S", line) for line in assignments), assignments
    assert any("display(show_plan(plan))" in c.source for c in notebook.cells if c.cell_type == "code")
    assert notebook.metadata.kernelspec.name == "kitlib"


@pytest.mark.parametrize("name", ["redis", "latency", "block"])
def test_the_plan_table_shows_the_profiles_values_with_their_meaning(name):
    plan = experiments.get(name).plan(environments=["native"], profile="quick")
    table = plan_table(plan).set_index("parameter")
    assert list(table.index) == list(type(plan.params).model_fields)
    assert (table["meaning"] != "").all(), table[table["meaning"] == ""]
    quick = experiments.get(name).profiles["quick"]
    for parameter, value in quick.items():
        assert table.loc[parameter, "value"] == value


@pytest.mark.parametrize("path", sorted(paths.notebooks_root().glob("*/*.ipynb")), ids=lambda p: p.stem)
def test_papermill_reads_every_parameter_with_its_comment(path):
    """A comment papermill cannot parse (an `=` or a quote in it) would drop the parameter from its help."""
    import papermill

    notebook = nbformat.read(path, 4)
    cells = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    names = [line.split(" = ")[0] for c in cells for line in c.source.splitlines() if re.match(r"^\w+ = ", line)]
    found = papermill.inspect_notebook(str(path))
    assert [n for n in names if n not in found] == []
    assert all(found[n]["help"] for n in names), [n for n in names if not found[n]["help"]]


#: parameters of a notebook that are neither shared nor the experiment's (where its tables are written)
NOTEBOOK_OWN = {"tables_dir"}
#: parameters the plan fills itself (how Linpack's N was chosen), never set by hand
FILLED_BY_THE_PLAN = {"linpack_n_basis", "sizing_basis"}


@pytest.mark.parametrize("name", specs.names())
def test_every_notebook_begins_with_the_shared_parameters_and_lists_all_of_its_own(name):
    """The shared parameters are written once (`notebook_cells.SHARED`); a notebook may not drift from
    them, may not miss a parameter of its experiment (`kit run -p` could not reach it interactively)
    and may not declare one nothing reads."""
    from kitlib.notebook_cells import plan_arguments, shared_block, shared_names

    spec = specs.get(name)
    notebook = nbformat.read(paths.notebooks_root() / spec.notebook, 4)
    cell = next(c for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assert (cell.source + "\n").startswith(shared_block(name) + "\n")
    declared = [line.split(" = ")[0] for line in cell.source.splitlines() if re.match(r"^\w+ = ", line)]
    own = set(declared) - set(shared_names(spec)) - NOTEBOOK_OWN
    assert own == set(spec.params_model.model_fields) - FILLED_BY_THE_PLAN, name
    namespace = {n: None for n in declared} | {"profile": "paper", "unrelated": 1}
    arguments = plan_arguments(name, namespace)
    assert arguments["profile"] == "paper" and "unrelated" not in arguments and "results_dir" not in arguments
