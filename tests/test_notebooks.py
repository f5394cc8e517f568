"""Every notebook in notebooks/ runs top to bottom without an error, at tiny
sizes (PAGEZERO_SCALE=tiny), with its working directory in tmp_path so it
writes nothing into the repository."""

import glob
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(REPO, "notebooks", "*.ipynb")))


@pytest.mark.parametrize(
    "path", NOTEBOOKS or [None], ids=[os.path.basename(p) for p in NOTEBOOKS] or ["none"]
)
def test_notebook_runs(path, tmp_path, monkeypatch):
    if path is None:
        pytest.skip("no notebooks in notebooks/")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    # The kernel inherits this environment.
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [
        (i, out.get("ename"), out.get("evalue"))
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert errors == []
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
