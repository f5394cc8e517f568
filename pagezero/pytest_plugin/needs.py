"""The pagezero marker: what a test's measurement needs, checked before it runs.

``@pytest.mark.pagezero(hugepages={"2MB": 512}, features=["avx512f"],
kernels=[...])``: a CPU feature pagezero does not detect here
(pagezero._core.cpu_features(), which PAGEZERO_HIDE_FEATURES can mask), a
kernel this CPU cannot run (pagezero.kernels(), with its reason) or too few
free hugepages skip the test with the missing need named: missing hardware is
a skip, not a failure. With --pagezero-reserve the hugepages are reserved by
pagezero.system.hugepages.reserve() instead (root only), which gives back what it
added when its block ends, also on an error, Ctrl-C, SIGTERM or SIGHUP; the
block is the plugin's ExitStack around the test's whole run protocol.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import pytest

from pagezero._core import PagezeroError, cpu_features
from pagezero.system.hugepages import pool, reserve
from pagezero.system.kernels import KINDS, kernels

__all__ = ["missing_needs", "reserve_needs"]


def _bad(message: str) -> NoReturn:
    """A marker of the wrong shape: the test errors in its setup, in one line."""
    pytest.fail(f"pagezero marker: {message}", pytrace=False)


def _check_names(what: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable):
        _bad(f"{what} must be a list of names, not {value!r}")
    return [str(v) for v in value]


def _missing_features(names: list[str]) -> list[str]:
    have = set(cpu_features())
    return [f"CPU feature {name}" for name in names if name not in have]


def _missing_kernels(names: list[str]) -> list[str]:
    table = {k.name: k for kind in KINDS for k in kernels(kind)}
    missing = []
    for name in names:
        kernel = table.get(name)
        if kernel is None:
            # A name pagezero does not know is a typo, not missing hardware.
            _bad(f"no kernel named {name!r} (pagezero kernels lists them)")
            continue
        if not kernel.available:
            missing.append(f"kernel {name} ({kernel.reason})")
    return missing


def _hugepages(value: Any, reserving: bool) -> tuple[list[str], dict[str, int]]:
    """What is missing of the hugepages asked for, and with `reserving` what
    to reserve instead: ([missing need], {page: pages needed})."""
    if value is None:
        return [], {}
    if not isinstance(value, Mapping):
        _bad(f"hugepages must be a dict such as {{'2MB': 512}}, not {value!r}")
    missing, to_reserve = [], {}
    for page, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            _bad(f"hugepages[{page!r}] must be a count, not {count!r}")
        try:
            have = pool(page)
        except ValueError as e:
            _bad(f"hugepages: {e}")
        except PagezeroError as e:  # no such pool on this kernel
            missing.append(f"{count} {page} hugepages ({e})")
            continue
        if have.available >= count:
            continue
        if reserving:
            to_reserve[page] = count
        else:
            missing.append(
                f"{count} free {page} hugepages ({have.available} available; "
                f"--pagezero-reserve reserves them as root)"
            )
    return missing, to_reserve


def missing_needs(marker: pytest.Mark, reserving: bool) -> tuple[list[str], dict[str, int]]:
    """What the test's pagezero marker asks for and this machine lacks.

    Parameters
    ----------
    marker : pytest.Mark
        The test's ``pagezero`` marker.
    reserving : bool
        --pagezero-reserve: missing hugepages are to be reserved, not missed.

    Returns
    -------
    tuple of (list of str, dict)
        The missing needs, each in words ("CPU feature avx512f", "kernel ...
        (reason)", "512 free 2MB hugepages (...)"), and the hugepages to
        reserve, {page: pages}, empty unless `reserving`.

    Raises
    ------
    pytest.fail.Exception
        A marker argument of the wrong shape, or a kernel name pagezero does not
        know (a typo, not missing hardware): the test errors in its setup.
    """
    unknown = set(marker.kwargs) - {"hugepages", "features", "kernels"}
    if marker.args or unknown:
        _bad(
            "takes only hugepages=, features= and kernels= "
            f"(got {', '.join(sorted(unknown)) or 'positional arguments'})"
        )
    missing = _missing_features(_check_names("features", marker.kwargs.get("features")))
    missing += _missing_kernels(_check_names("kernels", marker.kwargs.get("kernels")))
    short, to_reserve = _hugepages(marker.kwargs.get("hugepages"), reserving)
    return missing + short, to_reserve


def reserve_needs(to_reserve: Mapping[str, int], stack: contextlib.ExitStack) -> list[str]:
    """Reserve the hugepages on `stack`, which gives them back when it closes.

    Returns
    -------
    list of str
        What could not be reserved, with the reason (not root, too few pages
        found by the kernel); empty when all were.
    """
    missing = []
    for page, count in to_reserve.items():
        try:
            stack.enter_context(reserve(page, count))
        except PagezeroError as e:  # MappingError among them
            missing.append(f"{count} free {page} hugepages (reserving failed: {e})")
    return missing
