"""The numbered notebooks execute top to bottom (their own asserts check their numbers).

The kernel gets this checkout first on ``PYTHONPATH`` so it imports the
``ecocc`` under test, not another installed copy.  Notebooks listed in
``SLOW`` run only with ``pytest -m notebooks`` (see docs/notes/notebooks.md).
"""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
# Notebooks whose kernel needs more than ~10 s of CPU (measured on this 2-core machine, quiet, claims cache
# off: 02 11.9 s, 04 11.7 s, 07 15.8 s, 08 11.9 s; 01, 03, 05, 06 need 4-6 s each): they run with
# `pytest -m notebooks tests/test_notebooks.py`, so the default suite stays fast.
SLOW = {"02-petcp.ipynb", "04-delays-and-stability.ipynb", "07-multi-bottleneck-fairness.ipynb",
        "08-protocols-side-by-side.ipynb"}


def _param(p):
    marks = [pytest.mark.notebooks] if p.name in SLOW else []
    return pytest.param(p, id=p.name, marks=marks)


def test_notebooks_are_numbered_in_sequence():
    nums = [int(p.name[:2]) for p in NOTEBOOKS]
    assert nums == list(range(1, len(nums) + 1)), [p.name for p in NOTEBOOKS]


def test_notebooks_are_stored_without_outputs():
    nbformat = pytest.importorskip("nbformat")
    for p in NOTEBOOKS:
        nb = nbformat.read(p, as_version=4)
        dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
        assert not dirty, f"{p.name}: cells {dirty} carry outputs (clear them before committing)"


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(  # guard: the kernel must import this checkout's ecocc
        f"import ecocc, pathlib; assert pathlib.Path(ecocc.__file__).resolve().parent == pathlib.Path({str(ROOT / 'ecocc')!r}), ecocc.__file__"))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
