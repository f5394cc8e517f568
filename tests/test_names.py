"""One source for every name and rule: kernels come from the registry (never named
in Python except a user-facing default); rates are tests/test_units.py's."""

import os
import re

import pytest

import pagezero
from pagezero import _core
from pagezero.measure import policy
from pagezero.system.kernels import (
    KERNEL_KIND,
    clear_pages_kernel,
    find_kernel,
    kernel_roles,
    kernels,
    nontemporal_kernel,
)

PKG = os.path.join(os.path.dirname(__file__), "..", "pagezero")


REAL_ROWS = _core.kernels()


def rows_with(flagged):
    rows = [dict(r) for r in REAL_ROWS]
    for r in rows:
        r.pop("clear_pages", None)
        if r["name"] == flagged:
            r["clear_pages"] = True
    return rows


def test_clear_pages_kernel_follows_the_registry_flag(monkeypatch):
    monkeypatch.setattr(_core, "kernels", lambda: rows_with("generic"))
    assert clear_pages_kernel() == "generic"
    assert policy.default_kernel() == "generic"


def test_clear_pages_kernel_without_the_flag_is_an_available_clear_kernel(monkeypatch):
    monkeypatch.setattr(_core, "kernels", lambda: rows_with(None))
    k = find_kernel(clear_pages_kernel(), "clear")
    assert k.available and k.temporal


def test_nontemporal_kernels_are_the_registrys():
    nt = nontemporal_kernel()
    if nt is None:
        pytest.skip("no non-temporal clear kernel available on this CPU")
    k = find_kernel(nt)
    assert not k.temporal and k.available
    widest = find_kernel(nontemporal_kernel(widest=True))
    assert widest.unit == max(
        x.unit for x in kernels("clear") if x.available and not x.temporal and not x.zero_only
    )
    assert kernel_roles()["streaming"] == (widest.name,)


def test_strategies_needing_a_nontemporal_kernel_come_from_the_c_walk():
    needing = [s for s in policy.STRATEGIES if policy.orders.needs_nontemporal(s)]
    assert needing == ["nocache-except-target"]


def test_each_benchmark_takes_the_kernels_of_its_kind():
    names = {kind: {k.name for k in kernels(kind)} for kind in ("clear", "copy")}
    only = {"clear": names["clear"] - names["copy"], "copy": names["copy"] - names["clear"]}
    if not all(only.values()):
        pytest.skip("every kernel of this architecture is both a clear and a copy kernel")
    calls = {
        "memset": lambda k: pagezero.memset("4KB", function=k, loops=1),
        "memcpy": lambda k: pagezero.memcpy("4KB", function=k, loops=1),
        "batch": lambda k: pagezero.batch("4MB", "1MB", kernel=k, loops=1, backing="4KB"),
        "folio": lambda k: pagezero.folio("4MB", kernel=k, loops=1, backing="4KB"),
    }
    assert set(calls) == set(KERNEL_KIND)
    for benchmark, call in calls.items():
        kind = KERNEL_KIND[benchmark]
        other = "copy" if kind == "clear" else "clear"
        with pytest.raises(ValueError, match=f"^unknown {kind} kernel "):
            call(sorted(only[other])[0])


def test_no_kernel_names_in_python():
    """No string literal names an arch kernel (x86-64-..., arm64-...): the C
    registry marks clear_pages()'s row itself; the CLI is left to its own
    package."""
    pattern = re.compile(r"""["'](x86-64|arm64)-[a-z0-9-]+["']""")
    found = []
    for root, _, files in os.walk(PKG):
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith(".py") or "cli" in os.path.relpath(path, PKG):
                continue
            with open(path) as f:
                for line in f:
                    if pattern.search(line) and not line.lstrip().startswith("#"):
                        found.append(os.path.relpath(path, PKG))
    assert found == []
