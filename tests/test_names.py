"""One source for every name and rule: kernels come from the registry
(never named in Python except a user-facing default), rates are formatted in
units.py only."""

import os
import re

import pytest

from pagezero import _core, units
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
    needing = [s for s in policy.STRATEGIES if policy.needs_nontemporal(s)]
    assert needing == ["nocache-except-target"]


def test_kernel_kind_per_benchmark():
    assert KERNEL_KIND == {"memset": "clear", "memcpy": "copy", "batch": "clear", "folio": "clear"}


def test_no_kernel_names_in_python_outside_the_fallback():
    """A string literal naming an arch kernel (x86-64-..., arm64-...) may
    appear only in kernels.py's clear_pages() fallback; the CLI is left to
    its own package."""
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
    assert found == [os.path.join("system", "kernels.py")]


@pytest.mark.parametrize("value, text", [(1.25e9, "1.2 GB/s"), (None, "-"), (3e9, "3.0 GB/s")])
def test_gbps_is_ten_to_the_ninth(value, text):
    assert units.format_gbps(value) == text


def test_perfs_gb_per_sec_is_two_to_the_thirtieth():
    assert units.gb_per_sec(1 << 30) == 1.0
    assert units.format_rate(1 << 30).strip() == "1.000000 GB/sec"
