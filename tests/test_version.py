"""One version: pyproject.toml's [project] version, read through the installed
metadata (importlib.metadata) by pagezero.__version__, `pagezero --version`
and every results file."""

import importlib.metadata
import json

from conftest import ok, pagezero_cli

import pagezero
from pagezero.system.machine import build_info


def test_version_is_the_installed_distributions():
    assert pagezero.__version__ == importlib.metadata.version("pagezero")
    assert pagezero.__version__[0].isdigit()


def test_cli_prints_the_version():
    out = ok(pagezero_cli("--version"))
    assert out == f"pagezero {pagezero.__version__}\n"


def test_results_files_record_the_version_and_the_build(tmp_path):
    path = tmp_path / "r.json"
    pagezero.save_results(path, [pagezero.memset(size="4KB", loops=1)[0]])
    doc = json.loads(path.read_text())
    assert doc["pagezero"] == pagezero.__version__ == build_info()["pagezero"]
    # The compiler and the flags setup.py gave it (PZ_BUILD_FLAGS).
    assert doc["build"]["compiler"]
    assert "-O3" in doc["build"]["flags"]
