"""Sphinx configuration of pagezero's reference docs.

Built in CI with warnings as errors:

    pip install '.[docs]' && sphinx-build -W --keep-going -b html docs build/docs

The API pages come from the installed package's docstrings (autodoc, numpy style read
by napoleon), the command line from its argparse parsers (sphinx-argparse, through
pagezero.cli.build_parser()), and the kernel table from the registry of the machine
that builds the docs (_ext/pagezero_kernels.py), so none of them can drift from the code.
"""

import os
import sys

import pagezero

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "pagezero"
author = "the pagezero developers"
copyright = "2026, the pagezero developers"
release = pagezero.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "pagezero_kernels",
]

# numpy-style docstrings ("Parameters", "Returns", "Raises" sections).
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"

exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = ["_static"]
html_title = f"pagezero {release}"
