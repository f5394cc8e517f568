"""Hugepage pools: free and reserved, and reserving more for one run (docs/measuring.rst)."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass

from pagezero._core import MappingError, PagezeroError
from pagezero.files import entries, read_int
from pagezero.interrupt import Interrupted, deferred, signals_interrupt
from pagezero.units import format_page, parse_page

SYSFS = "/sys/kernel/mm/hugepages"
NODE_SYSFS = "/sys/devices/system/node"  # each node's share: nodeN/hugepages/hugepages-<kB>kB/

# How often reserve() grows a pool whose new pages other processes map first.
GROW_TRIES = 3


@dataclass(frozen=True)
class Pool:
    """One hugepage pool, as sysfs describes it when read.

    Attributes
    ----------
    page, page_bytes : str, int
        The page size: ``"2MB"`` or ``"1GB"``, and in bytes.
    total, free, reserved, surplus : int
        Pages: ``nr_hugepages``, ``free_hugepages`` (not faulted in), ``resv_hugepages`` (free
        but promised to existing mappings), ``surplus_hugepages`` (beyond ``nr_hugepages``).
    path, available : str, int
        The file to write to resize the pool; pages a new mapping can have now: free less reserved.
    """

    page: str
    page_bytes: int
    total: int
    free: int
    reserved: int
    surplus: int
    path: str

    @property
    def available(self) -> int:
        return max(0, self.free - self.reserved)


def _pool_dir(page: str | int, root: str) -> str:
    return os.path.join(root, f"hugepages-{(1 << parse_page(page)) // 1024}kB")


def _read_pool(directory: str, page_bytes: int) -> Pool | None:
    counts = ("nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages")
    values = [read_int(os.path.join(directory, name)) for name in counts]
    if None in values[:2]:  # no nr_hugepages or free_hugepages: no pool
        return None
    total, free, reserved, surplus = (v or 0 for v in values)
    page = format_page(page_bytes.bit_length() - 1)
    path = os.path.join(directory, counts[0])
    return Pool(page, page_bytes, total, free, reserved, surplus, path)


def pools(sysfs: str | None = None) -> dict[str, Pool]:
    """Every hugepage pool of this machine, read afresh.

    Parameters
    ----------
    sysfs : str, optional
        The pools' directory (default ``/sys/kernel/mm/hugepages``); tests give a fixture tree.

    Returns
    -------
    dict of str to Pool
        ``{"2MB": Pool, "1GB": Pool, ...}``, smallest first; empty without hugetlb.
    """
    sysfs = sysfs or SYSFS
    found = [
        _read_pool(os.path.join(sysfs, m[0]), int(m[1]) * 1024)
        for m in entries(sysfs, r"hugepages-(\d+)kB")
    ]
    return {p.page: p for p in sorted(filter(None, found), key=lambda p: p.page_bytes)}


def pool(page: str | int) -> Pool:
    """The pool of one page size, read afresh; MappingError (ENOENT) where the kernel has none."""
    shift = parse_page(page)
    directory = _pool_dir(page, SYSFS)
    p = _read_pool(directory, 1 << shift)
    if p is None:
        # An arm64 kernel with 64KB pages has 2MB, 512MB and 16GB pools, no 1GB one.
        sizes = ", ".join(pools()) or "none"
        raise MappingError(
            errno.ENOENT,
            f"this kernel has no {format_page(shift)} hugepage pool ({directory} is "
            f"missing; its pools: {sizes})",
        )
    return p


def pages_needed(nbytes: int, page: str | int, count: int = 1) -> int:
    """Hugepages that `count` mappings of `nbytes` bytes each need."""
    return count * -(-nbytes // (1 << parse_page(page)))


def check_available(page: str | int, needed: int, can_reserve: bool = False) -> Pool:
    """The pool, if a new mapping can have `needed` pages of it now; else MappingError (ENOMEM)
    with the command that reserves them, and with `can_reserve` the --reserve option too."""
    p = pool(page)
    if p.available >= needed:
        return p
    raise MappingError(
        errno.ENOMEM,
        f"not enough {p.page} hugepages: {needed} needed, {p.available} available "
        f"({p.total} in the pool, {p.free} free, {p.reserved} reserved by other mappings); "
        f"reserve them as root with: echo {p.total + needed - p.available} > {p.path}"
        + (" (or pass --reserve / reserve=True to do it for this run only)" if can_reserve else ""),
    )


def _node_pool_dir(page: str | int, node: int, root: str | None) -> str:
    return _pool_dir(page, os.path.join(root or NODE_SYSFS, f"node{node}", "hugepages"))


def node_free(page: str | int, node: int, root: str | None = None) -> int | None:
    """Free hugepages of one size on one NUMA node; None where sysfs has no per-node count."""
    return read_int(os.path.join(_node_pool_dir(page, node, root), "free_hugepages"))


def check_mappable(nbytes: int, page: str | int, buffers: int = 1, node: int | None = None) -> None:
    """MappingError unless `buffers` mappings of `nbytes` can have their pages now (on `node`)."""
    needed = pages_needed(nbytes, page, buffers)
    check_available(page, needed)
    if node is not None:
        check_node_available(page, needed, node)


def available_pages(page: str | int, node: int | None = None) -> int:
    """Hugepages of `page` a mapping can have now (0 without its pool), at most `node`'s free."""
    try:
        available = pool(page).available
    except MappingError:
        return 0
    on_node = None if node is None else node_free(page, node)
    return available if on_node is None else min(available, on_node)


def check_node_available(
    page: str | int, needed: int, node: int, root: str | None = None
) -> int | None:
    """The node's free pages, or MappingError (ENOMEM) when fewer than `needed`: a mapping
    reserves against the whole pool, and on a node without free pages fails at first touch."""
    free = node_free(page, node, root)
    if free is None or free >= needed:
        return free
    path = os.path.join(_node_pool_dir(page, node, root), "nr_hugepages")
    nr = read_int(path) or 0
    raise MappingError(
        errno.ENOMEM,
        f"not enough {format_page(parse_page(page))} hugepages on node {node}: {needed} "
        f"needed, {free} free there ({nr} in its pool); reserve them on that node as root "
        f"with: echo {nr + needed - free} > {path}",
    )


def _write(path: str, value: int) -> None:
    with open(path, "w") as f:
        f.write(f"{value}\n")


def _give_back(path: str, page: str | int, added: int) -> KeyboardInterrupt | None:
    """Shrink the pool by what reserve() added, retried past a signal, returned to be raised."""
    late, done = None, False
    while not done:
        try:
            with deferred():
                if not done:
                    _write(path, max(0, pool(page).total - added))
                    done = True
        except KeyboardInterrupt as e:
            late = late or e
    return late


@contextlib.contextmanager
def reserve(page: str | int, needed: int) -> Iterator[Pool]:
    """Make `needed` pages of `page` available for the block, giving back what it added after.

    Parameters
    ----------
    page, needed : str or int, int
        ``"2MB"`` or ``"1GB"``; pages a new mapping must be able to have.

    Yields
    ------
    Pool
        The pool as it was once grown.

    Raises
    ------
    pagezero.PagezeroError
        The pool must grow and this process is not root; the message gives root's command.
    pagezero.MappingError
        No such pool, or it could not grow enough (memory, other processes: GROW_TRIES tries).
    """
    before = pool(page)
    missing = needed - before.available
    if missing <= 0:
        yield before
        return
    if os.geteuid() != 0:
        raise PagezeroError(
            f"reserving {missing} more {before.page} hugepages needs root (it writes "
            f"{before.path}); run as root, or ask root to: "
            f"echo {before.total + missing} > {before.path}"
        )
    added, unwinding, taken = 0, True, frozenset[int]()
    try:
        # SIGTERM and SIGHUP unwind the stack (finally blocks run), as under the CLI's.
        with signals_interrupt((signal.SIGTERM, signal.SIGHUP)) as taken:
            try:
                grown = before
                for _ in range(GROW_TRIES):
                    short = needed - grown.available
                    with deferred():
                        _write(before.path, grown.total + short)
                        now = pool(page)
                        added += now.total - grown.total
                    if now.total < grown.total + short:
                        raise MappingError(
                            errno.ENOMEM,
                            f"asked the kernel for {short} more {before.page} hugepages "
                            f"({before.path}: {grown.total} -> {grown.total + short}) but it "
                            f"found only {max(now.total - grown.total, 0)} (memory too "
                            f"fragmented or too small); {needed} needed, {now.available} "
                            "available",
                        )
                    grown = now
                    if grown.available >= needed:
                        break
                else:
                    raise MappingError(
                        errno.ENOMEM,
                        f"grew the {before.page} hugepage pool by {added} pages in "
                        f"{GROW_TRIES} tries ({before.path}: {before.total} -> {grown.total}) "
                        f"but other processes mapped them as fast; {needed} needed, "
                        f"{grown.available} available",
                    )
                yield grown
                unwinding = False
            finally:
                if added > 0:
                    late = _give_back(before.path, page, added)
                    # A signal during the give-back after a normal end still stops the run;
                    # during an unwind, the first exception goes on.
                    if late is not None and not unwinding:
                        raise late
    except Interrupted as e:
        if e.signum in taken:
            # The pool is restored and the default action back: die of the signal now.
            os.kill(os.getpid(), e.signum)
        raise


@dataclass(frozen=True)
class Reservation:
    """What reserve_where_possible() did for a pool: pages `needed`, `added`, why it `failed`."""

    page: str
    needed: int
    added: int
    failed: str | None = None


@contextlib.contextmanager
def reserve_where_possible(needs: dict[str, int]) -> Iterator[list[Reservation]]:
    """reserve() for each pool of `needs` ({page: pages}) where memory allows, yielding a
    Reservation per page in their order; a pool that cannot grow says why (not root: raises)."""
    with contextlib.ExitStack() as held:
        done = []
        for page, needed in needs.items():
            try:
                before = pool(page).total
                grown = held.enter_context(reserve(page, needed))
            except MappingError as e:
                done.append(Reservation(page, needed, 0, str(e.strerror or e)))
                continue
            done.append(Reservation(page, needed, grown.total - before))
        yield done


def lacking(needs: dict[str, int]) -> dict[str, tuple[int, str]]:
    """The existing pools of `needs` short of pages now: {page: (nr_hugepages to write, file)}."""
    short = {}
    for page, needed in needs.items():
        try:
            p = pool(page)
        except MappingError:
            continue
        if p.available < needed:
            short[page] = (p.total + needed - p.available, p.path)
    return short
