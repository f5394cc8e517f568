"""Clearing orders: the C core's strategies (csrc/policy.c), their steps, kernels and regions."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from pagezero import _core
from pagezero.measure.conditions import check_choice
from pagezero.system.backing import Backing
from pagezero.system.kernels import Kernel, clear_pages_kernel, find_kernel, nontemporal_kernel
from pagezero.system.memory import base_page, region
from pagezero.units import format_size, parse_size

_CONSTANTS: dict[str, int] = _core.policy_constants()
PAGE_SIZE: int = _CONSTANTS["page_size"]
NEIGHBOURHOOD_RADIUS: int = _CONSTANTS["neighbourhood_radius"]

STRATEGIES: tuple[str, ...] = _core.strategies()

# What each kernel generation clears between resched points, the one table of them (sources
# in docs/policies.rst); None: the whole region in one call.
PRESETS: dict[str, int | None] = {
    "page": PAGE_SIZE,  # clear_page() one page at a time: an arch without clear_pages()
    "8MB": 8 << 20,  # ARCH_PAGE_CONTIG_NR, "mm: folio_zero_user: clear contiguous pages" v6-v8
    "32MB": 32 << 20,  # PROCESS_PAGES_NON_PREEMPT_BATCH, Linux 7.0 on x86
    "extent": None,  # preempt=full|lazy need no batch
}


# The kernel Linux's clear_pages() uses on this CPU; the first available non-temporal one.
default_kernel = clear_pages_kernel
default_nt_kernel = nontemporal_kernel


def check_kernel(name: str | None, what: str = "kernel") -> Kernel:
    """The clear kernel `name` (None: default_kernel()), checked to run here; `what` names it."""
    name = name or default_kernel()
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a name (str), not {name!r}")
    k = find_kernel(name, "clear")
    if not k.available:
        raise _core.UnavailableError(f"kernel {name!r} is not available: {k.reason}")
    return k


def check_strategy(name: str) -> str:
    """`name`, checked to be one of STRATEGIES."""
    return check_choice("strategy", name, STRATEGIES)


def pages(nbytes: int, what: str) -> int:
    """`nbytes` in 4KB pages; ValueError, naming `what`, for a partial page."""
    if nbytes % PAGE_SIZE:
        raise ValueError(
            f"invalid {what} {format_size(nbytes)}: not a whole number of "
            f"{format_size(PAGE_SIZE)} pages"
        )
    return nbytes // PAGE_SIZE


def check_base_page(what: str) -> None:
    """ValueError, naming `what`, unless the base page is the 4KB page the walks model."""
    base = base_page()
    if base != PAGE_SIZE:
        raise ValueError(
            f"{what} walks {format_size(PAGE_SIZE)} pages, clear_page()'s unit on a "
            f"4KB-page kernel; this kernel's base page is {format_size(base)} "
            f"(getpagesize()): not modelled"
        )


def batch_bytes(value: int | str | None, extent: int) -> int:
    """A batch in bytes: a preset (PRESETS), a size, or None for the whole `extent`."""
    if value == "page":
        check_base_page("the batch preset 'page'")
    if isinstance(value, str) and value in PRESETS:
        value = PRESETS[value]
    if value is None:
        return extent
    try:
        return parse_size(value, what="batch")
    except ValueError as e:
        raise ValueError(f"{e} (or a preset: {', '.join(PRESETS)})") from None


def check_fault(fault_index: int, nr_pages: int) -> None:
    """`fault_index`, checked to be a page of a folio of `nr_pages` pages."""
    if isinstance(fault_index, bool) or not isinstance(fault_index, int):
        raise ValueError(f"fault index must be an int, not {fault_index!r}")
    if not 0 <= fault_index < nr_pages:
        raise ValueError(
            f"fault index {fault_index} is outside the folio (0..{nr_pages - 1}, {nr_pages} pages)"
        )


@dataclass(frozen=True)
class Step:
    """One clear a strategy decides on: 4KB pages [first, first + count) of the folio, one call."""

    first: int
    count: int
    nontemporal: bool  # with the non-temporal kernel


def clear_order(
    strategy: str, nr_pages: int, fault_index: int = 0, batch: int | str | None = "32MB"
) -> tuple[Step, ...]:
    """The steps `strategy` takes over a folio, without clearing: the timed loops' C walk.

    Parameters
    ----------
    strategy : str
        One of STRATEGIES.
    nr_pages : int
        The folio's size in 4KB pages.
    fault_index : int
        The faulting page, 0 <= fault_index < nr_pages.
    batch : int, str or None
        The most cleared at once: a preset (PRESETS), a size (whole pages), None for the folio.

    Returns
    -------
    tuple of Step

    Raises
    ------
    ValueError
        For an unknown strategy, a bad page count, fault index or batch.
    """
    check_strategy(strategy)
    if isinstance(nr_pages, bool) or not isinstance(nr_pages, int) or nr_pages < 1:
        raise ValueError(f"nr_pages must be a positive int, not {nr_pages!r}")
    check_fault(fault_index, nr_pages)
    batch_pages = max(1, pages(batch_bytes(batch, nr_pages * PAGE_SIZE), "batch"))
    return tuple(Step(*s) for s in _core.clear_order(strategy, nr_pages, fault_index, batch_pages))


@functools.cache
def needs_nontemporal(strategy: str) -> bool:
    """Whether `strategy` clears with a non-temporal kernel, read from the C walk itself."""
    nr = (2 << 20) // PAGE_SIZE
    return any(s.nontemporal for s in clear_order(strategy, nr, 0, "extent"))


def nt_kernel_for(strategy: str, nt_kernel: str | None) -> str | None:
    """The non-temporal kernel `strategy` clears with (None when it uses none)."""
    if not needs_nontemporal(strategy):
        return None
    name = nt_kernel or default_nt_kernel()
    if name is None:
        raise _core.UnavailableError(
            f"strategy {strategy!r} needs a non-temporal "
            "clear kernel and this machine has none available"
        )
    k = check_kernel(name, "nt_kernel")
    if k.temporal:
        raise ValueError(
            f"nt_kernel {name!r} uses temporal stores; {strategy} needs a non-temporal one"
        )
    return name


def clear_folio(
    buffer: Any,
    strategy: str,
    fault_index: int = 0,
    kernel: str | None = None,
    nt_kernel: str | None = None,
    batch: int | str | None = "32MB",
    record: bool = False,
) -> tuple[Step, ...] | None:
    """Zero a buffer in `strategy`'s order, untimed, through the timed loops' clearing callback.

    Parameters
    ----------
    buffer : writable buffer
        Whole 4KB pages.
    strategy, fault_index, batch
        As clear_order() takes them (fault_index a page of `buffer`).
    kernel, nt_kernel : str or None
        As folio() takes them.
    record : bool
        Return the steps executed (else None).

    Returns
    -------
    tuple of Step or None

    Raises
    ------
    ValueError
        For a bad strategy, kernel, fault index, batch or buffer.
    UnavailableError
        For a kernel this machine cannot run, or no non-temporal one where the strategy needs it.
    """
    check_strategy(strategy)
    kernel = check_kernel(kernel).name
    nt = nt_kernel_for(strategy, nt_kernel)
    nbytes = memoryview(buffer).nbytes
    if nbytes >= PAGE_SIZE:  # a partial page is the C core's to refuse, by its rule
        check_fault(fault_index, nbytes // PAGE_SIZE)
    batch_pages = max(1, pages(batch_bytes(batch, nbytes), "batch"))
    steps = _core.clear_folio(buffer, strategy, fault_index, batch_pages, kernel, nt, record)
    return None if steps is None else tuple(Step(*s) for s in steps)


def backed_region(nbytes: int, used: Backing, populate: bool) -> Any:
    """A region of `nbytes` on the pages `used` says, the C core rounding hugetlb ones up."""
    # Whole 2MB pages for THP, or a region under 2MB (or its last part) cannot have one;
    # mappings of 2MB or more asking for THP start on a 2MB boundary (csrc/region.c).
    size = -(-nbytes // (2 << 20)) * (2 << 20) if used.how == "thp" else nbytes
    return region(size, populate=populate, **used.region_args())


def bind(buffer: Any, node: int) -> None:
    """mbind `buffer` (whole pages) to NUMA node `node`; ValueError saying why not."""
    try:
        _core.numa_bind(buffer, node)
    except OSError as e:
        raise ValueError(
            f"could not bind the region to node {node} (mbind: {e.strerror})"
        ) from None
