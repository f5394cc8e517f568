"""The type information pagezero ships (PEP 561): the py.typed marker, and a stub of the
C extension (pagezero/_core.pyi) that matches what the built module really has.

The stub is written by hand from csrc/py/*.c; these tests hold it to the module: the
same public names, the same parameters (names, keyword-only or not, defaults) as the
docstring signatures that ``inspect.signature`` reads, and Region's attributes.
"""

import ast
import inspect
import os

import pytest

import pagezero
from pagezero import _core

PACKAGE_DIR = os.path.dirname(pagezero.__file__)
STUB = os.path.join(PACKAGE_DIR, "_core.pyi")


def _public(names):
    return {n for n in names if not n.startswith("_")}


@pytest.fixture(scope="module")
def stub():
    with open(STUB) as f:
        return ast.parse(f.read(), STUB)


def _top_level(tree):
    """The stub's module-level names: functions, classes and annotated constants."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def _params(fn):
    """(name, keyword_only, default) of a stub function's parameters, self left out."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + [
        ast.literal_eval(d) for d in args.defaults
    ]
    rows = [(a.arg, False, d) for a, d in zip(positional, defaults)]
    rows += [
        (a.arg, True, inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return [r for r in rows if r[0] != "self"]


def _runtime_params(obj):
    return [
        (p.name, p.kind is inspect.Parameter.KEYWORD_ONLY, p.default)
        for p in inspect.signature(obj).parameters.values()
    ]


def test_type_information_is_installed():
    """py.typed (PEP 561) and the stub sit next to the package mypy will find."""
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "py.typed"))
    assert os.path.isfile(STUB)


def test_stub_has_every_name_of_the_extension(stub):
    assert set(_public(_top_level(stub))) == _public(dir(_core))


def test_stub_functions_take_the_extensions_parameters(stub):
    names = _top_level(stub)
    functions = [n for n in _public(dir(_core)) if inspect.isbuiltin(getattr(_core, n))]
    assert functions  # the module has functions to compare
    for name in functions:
        assert isinstance(names[name], ast.FunctionDef), name
        assert _params(names[name]) == _runtime_params(getattr(_core, name)), name


def test_stub_region_matches_the_type(stub):
    region = _top_level(stub)["Region"]
    members = {n.name: n for n in region.body if isinstance(n, ast.FunctionDef)}
    assert _public(members) == _public(dir(_core.Region))
    assert _params(members["__init__"]) == _runtime_params(_core.Region)


def test_stub_exceptions_have_the_extensions_bases(stub):
    classes = {n: c for n, c in _top_level(stub).items() if isinstance(c, ast.ClassDef)}
    for name, node in classes.items():
        runtime = getattr(_core, name)
        assert [ast.unparse(b) for b in node.bases] == [
            b.__name__ for b in runtime.__bases__ if b is not object
        ], name


# A call with a misspelled keyword, one with a wrong type, and a correct one with runs.
_CALLS = """\
import pagezero
pagezero.memset("1MB", loop=3)
pagezero.memset(size=[1])
rs: pagezero.ResultSet = pagezero.memset("1MB", loops=3, runs=3)
"""


def test_mypy_checks_the_public_calls_arguments(tmp_path, monkeypatch):
    """pagezero.memset and the other runs= calls keep their real parameters for mypy
    (runs.processes.with_runs is ParamSpec-typed), not Callable[..., ResultSet]."""
    from mypy import api

    (tmp_path / "calls.py").write_text(_CALLS)
    # The pagezero these tests import, wherever it is (installed or this checkout).
    monkeypatch.setenv("MYPYPATH", os.path.dirname(PACKAGE_DIR))
    out, _, status = api.run([str(tmp_path / "calls.py"), "--cache-dir", str(tmp_path / "c")])
    lines = out.splitlines()
    assert status == 1, out
    assert any(':2: error: Unexpected keyword argument "loop"' in x for x in lines), out
    assert any(':3: error: Argument "size" has incompatible type' in x for x in lines), out
    assert not any(":4:" in x for x in lines), out
    assert "Found 2 errors in 1 file" in out
