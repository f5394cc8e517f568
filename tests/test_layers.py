"""What the layer contract cannot see: a module taking a name from the root package.

import-linter (pyproject.toml [tool.importlinter], run by tools/lint.sh) holds the layers,
but it reads `from pagezero import _core` as an import of the root package, since the C
extension has no source for it to read, so the contract ignores imports of the root. The
root re-exports every layer: below the integrations, a module that took the public
`memset` from it would import the layers above itself. This test holds the rest: only the
extension, the version and submodules come from the root.
"""

import ast
import os

import pagezero

PKG = os.path.dirname(pagezero.__file__)
# The integrations sit above every layer and may use the public API, as users do.
ABOVE_ALL = ("cli", "fleet", "store", "pytest_plugin")
FROM_ROOT = {"_core", "__version__"}


def names_taken_from_root(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "pagezero":
            for alias in node.names:
                yield alias.name


def test_layers_take_only_the_extension_and_submodules_from_the_root():
    taken = []
    for root, _, files in os.walk(PKG):
        rel = os.path.relpath(root, PKG)
        if rel.split(os.sep)[0] in ABOVE_ALL:
            continue
        for name in files:
            if not name.endswith(".py") or (rel == "." and name in ("__init__.py", "__main__.py")):
                continue
            path = os.path.join(root, name)
            for imported in names_taken_from_root(path):
                submodule = os.path.exists(os.path.join(PKG, imported + ".py")) or os.path.isdir(
                    os.path.join(PKG, imported)
                )
                if imported not in FROM_ROOT and not submodule:
                    taken.append(f"{os.path.relpath(path, PKG)}: {imported}")
    assert taken == []
