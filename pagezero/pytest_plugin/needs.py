"""The pagezero marker (docs/ci.rst, "What a test needs"): missing hardware is a skip; a
marker of the wrong shape or an unknown kernel, an error."""

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


def _hugepages(value: Any, reserving: bool) -> tuple[list[str], dict[str, int]]:
    """([missing need], {page: pages to reserve instead, with `reserving`})."""
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
        if have.available < count and reserving:
            to_reserve[page] = count
        elif have.available < count:
            missing.append(
                f"{count} free {page} hugepages ({have.available} available; "
                f"--pagezero-reserve reserves them as root)"
            )
    return missing, to_reserve


def missing_needs(marker: pytest.Mark, reserving: bool) -> tuple[list[str], dict[str, int]]:
    """What the marker asks for and this machine lacks, in words, and the hugepages to
    reserve (with `reserving`); a bad marker or kernel name errors the setup."""
    unknown = set(marker.kwargs) - {"hugepages", "features", "kernels"}
    if marker.args or unknown:
        _bad(
            "takes only hugepages=, features= and kernels= "
            f"(got {', '.join(sorted(unknown)) or 'positional arguments'})"
        )
    have = set(cpu_features())
    features = _check_names("features", marker.kwargs.get("features"))
    missing = [f"CPU feature {name}" for name in features if name not in have]
    table = {k.name: k for kind in KINDS for k in kernels(kind)}
    for name in _check_names("kernels", marker.kwargs.get("kernels")):
        if name not in table:
            _bad(f"no kernel named {name!r} (pagezero kernels lists them)")
        if not table[name].available:
            missing.append(f"kernel {name} ({table[name].reason})")
    short, to_reserve = _hugepages(marker.kwargs.get("hugepages"), reserving)
    return missing + short, to_reserve


def reserve_needs(to_reserve: Mapping[str, int], stack: contextlib.ExitStack) -> list[str]:
    """Reserve the hugepages on `stack`, which gives them back; what could not be, and why."""
    missing = []
    for page, count in to_reserve.items():
        try:
            stack.enter_context(reserve(page, count))
        except PagezeroError as e:  # MappingError among them
            missing.append(f"{count} free {page} hugepages (reserving failed: {e})")
    return missing
