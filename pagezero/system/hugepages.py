"""Hugepage pools: what is reserved and free, and reserving more for one run.

2MB and 1GB hugetlb mappings take their pages from the kernel's pools in
/sys/kernel/mm/hugepages/hugepages-<size>kB/. A mapping reserves its pages
when it is created, so the pages a new mapping can have are the free ones
less those already promised to other mappings (resv_hugepages).

reserve() grows a pool for the length of a `with` block and gives back what
it added afterwards, also on an exception, Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pagezero._core import MappingError, PagezeroError
from pagezero.interrupt import Interrupted, deferred, signals_interrupt
from pagezero.units import format_page, parse_page

__all__ = [
    "Pool",
    "pools",
    "pool",
    "pages_needed",
    "check_available",
    "reserve",
    "SYSFS",
    "NODE_SYSFS",
    "node_free",
    "check_node_available",
]

SYSFS = "/sys/kernel/mm/hugepages"
# Each NUMA node's share of the pools: nodeN/hugepages/hugepages-<kB>kB/.
NODE_SYSFS = "/sys/devices/system/node"


@dataclass(frozen=True)
class Pool:
    """One hugepage pool, as sysfs describes it when read.

    Attributes
    ----------
    page : str
        ``"2MB"`` or ``"1GB"``.
    page_bytes : int
        The page size in bytes.
    total : int
        ``nr_hugepages``: the pool's size, in pages.
    free : int
        ``free_hugepages``: pages not yet faulted in by anyone.
    reserved : int
        ``resv_hugepages``: free pages already promised to existing mappings.
    surplus : int
        ``surplus_hugepages``: pages overcommitted beyond ``nr_hugepages``.
    path : str
        The file to write to change the pool's size.
    """

    page: str  # "2MB" or "1GB"
    page_bytes: int
    total: int  # nr_hugepages: the pool's size
    free: int  # free_hugepages: not yet faulted in by anyone
    reserved: int  # resv_hugepages: free, but promised to existing mappings
    surplus: int  # surplus_hugepages: overcommitted beyond nr_hugepages
    path: str  # the file to write to change the pool's size

    @property
    def available(self) -> int:
        """Pages a new mapping can have now: free less reserved."""
        return max(0, self.free - self.reserved)

    def as_dict(self) -> dict[str, Any]:
        """The pool as a JSON-ready dict.

        Returns
        -------
        dict of str to int or str
            ``total``, ``free``, ``reserved``, ``surplus``, ``available`` (pages) and
            ``path``; not ``page`` and ``page_bytes``.
        """
        return {
            "total": self.total,
            "free": self.free,
            "reserved": self.reserved,
            "surplus": self.surplus,
            "available": self.available,
            "path": self.path,
        }


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def _pool_dir(shift: int) -> str:
    return os.path.join(SYSFS, f"hugepages-{(1 << shift) // 1024}kB")


def _read_pool(directory: str, page: str, page_bytes: int) -> Pool | None:
    values = [
        _read_int(os.path.join(directory, name))
        for name in ("nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages")
    ]
    if values[0] is None or values[1] is None:
        return None
    total, free, reserved, surplus = (v or 0 for v in values)
    return Pool(
        page, page_bytes, total, free, reserved, surplus, os.path.join(directory, "nr_hugepages")
    )


def pools(sysfs: str | None = None) -> dict[str, Pool]:
    """Every hugepage pool of this machine, read afresh.

    Parameters
    ----------
    sysfs : str, optional
        The directory of the pools; by default ``/sys/kernel/mm/hugepages``. Tests
        point it at a fixture tree.

    Returns
    -------
    dict of str to Pool
        ``{"2MB": Pool, "1GB": Pool, ...}`` by page size, smallest first; empty
        without hugetlb.
    """
    sysfs = sysfs or SYSFS
    found: dict[str, Pool] = {}
    try:
        entries = os.listdir(sysfs)
    except OSError:
        return found
    for entry in entries:
        kb = entry[len("hugepages-") : -len("kB")]
        if not (entry.startswith("hugepages-") and entry.endswith("kB") and kb.isdigit()):
            continue
        page_bytes = int(kb) * 1024
        name = format_page(page_bytes.bit_length() - 1)
        p = _read_pool(os.path.join(sysfs, entry), name, page_bytes)
        if p:
            found[name] = p
    return dict(sorted(found.items(), key=lambda kv: kv[1].page_bytes))


def pool(page: str | int) -> Pool:
    """The pool of one page size, read afresh.

    Parameters
    ----------
    page : str or int
        ``"2MB"`` or ``"1GB"`` (or any spelling :func:`~pagezero.units.parse_page` reads).

    Returns
    -------
    Pool

    Raises
    ------
    pagezero.MappingError
        ``ENOENT`` when this kernel has no pool of that size.
    ValueError
        For a page size that is not 4KB, 2MB or 1GB.
    """
    shift = parse_page(page)
    name = format_page(shift)
    p = _read_pool(_pool_dir(shift), name, 1 << shift)
    if p is None:
        raise MappingError(
            errno.ENOENT, f"this kernel has no {name} hugepage pool ({_pool_dir(shift)} is missing)"
        )
    return p


def pages_needed(nbytes: int, page: str | int, count: int = 1) -> int:
    """Hugepages that `count` mappings of `nbytes` bytes each need.

    Parameters
    ----------
    nbytes : int
        Bytes per mapping (rounded up to whole pages).
    page : str or int
        The page size, ``"2MB"`` or ``"1GB"``.
    count : int
        Mappings.

    Returns
    -------
    int
        Pages.
    """
    size = 1 << parse_page(page)
    return count * -(-nbytes // size)


def check_available(page: str | int, needed: int, can_reserve: bool = False) -> Pool:
    """Check that a new mapping can have `needed` pages of `page` now.

    Parameters
    ----------
    page : str or int
        ``"2MB"`` or ``"1GB"``.
    needed : int
        Pages.
    can_reserve : bool
        The caller offers ``--reserve`` / ``reserve=True`` (the fault runs): the
        message then names that way too. Other callers have no such option, and
        a hint at one would send the user looking for it.

    Returns
    -------
    Pool
        The pool, as read.

    Raises
    ------
    pagezero.MappingError
        ``ENOMEM`` with the command that reserves them (the sysfs file to write), or
        ``ENOENT`` when there is no such pool.
    """
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
    return os.path.join(
        root or NODE_SYSFS,
        f"node{node}",
        "hugepages",
        f"hugepages-{(1 << parse_page(page)) // 1024}kB",
    )


def node_free(page: str | int, node: int, root: str | None = None) -> int | None:
    """Free hugepages of one size on one NUMA node.

    Parameters
    ----------
    page : str or int
        ``"2MB"`` or ``"1GB"``.
    node : int
        The node.
    root : str, optional
        The directory of the nodes; by default ``/sys/devices/system/node``.

    Returns
    -------
    int or None
        Pages, or None where sysfs has no per-node count (a kernel without NUMA).
    """
    return _read_int(os.path.join(_node_pool_dir(page, node, root), "free_hugepages"))


def check_node_available(
    page: str | int, needed: int, node: int, root: str | None = None
) -> int | None:
    """Check that NUMA node `node` has `needed` free hugepages of `page`.

    A hugetlb mapping reserves its pages against the whole pool when it is
    mapped (mm/hugetlb.c hugetlb_reserve_pages()); binding it to a node
    afterwards (mbind) only moves where the faults take pages from, so a
    node without free pages fails at the first touch, with SIGBUS. Checking
    the node's own count first turns that into an error.

    Parameters
    ----------
    page : str or int
        ``"2MB"`` or ``"1GB"``.
    needed : int
        Pages.
    node : int
        The node.
    root : str, optional
        The directory of the nodes; by default ``/sys/devices/system/node``.

    Returns
    -------
    int or None
        The node's free pages, or None where sysfs has no per-node count (nothing
        is checked then).

    Raises
    ------
    pagezero.MappingError
        ``ENOMEM`` naming the node and the file to write.
    """
    directory = _node_pool_dir(page, node, root)
    free = node_free(page, node, root)
    if free is None or free >= needed:
        return free
    nr = _read_int(os.path.join(directory, "nr_hugepages")) or 0
    path = os.path.join(directory, "nr_hugepages")
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
    """Shrink the pool by what reserve() added, signals held meanwhile.

    A signal that lands after the block's exception but before the signals
    are held (a second Ctrl-C, SIGTERM after SIGINT) raises here too: the
    give-back is tried again rather than skipped. Returns the first such
    interruption, for the caller to raise once the pool is back.
    """
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


# How often reserve() grows a pool whose new pages other processes map before this one
# can: each try asks for what is still missing. A machine's other hugetlb users come
# and go, and one that maps pages between the write and the check is no shortage of
# memory in the kernel.
GROW_TRIES = 3


@contextlib.contextmanager
def reserve(page: str | int, needed: int) -> Iterator[Pool]:
    """A context manager that makes `needed` pages of `page` available for its block.

    Grows the pool only by what is missing (nothing when enough are free),
    as root only; again by what is still missing, up to GROW_TRIES times, when
    other processes map the new pages first. Afterwards, also on an error,
    Ctrl-C, SIGTERM or SIGHUP, the pool gives back exactly what was added: it
    returns to its previous size unless someone else resized it meanwhile,
    whose change is kept.

    Parameters
    ----------
    page : str or int
        ``"2MB"`` or ``"1GB"``.
    needed : int
        Pages a new mapping must be able to have.

    Yields
    ------
    Pool
        The pool as it was once grown.

    Raises
    ------
    pagezero.PagezeroError
        When the pool must grow and this process is not root; the message gives the
        command for root.
    pagezero.MappingError
        When the kernel grew the pool by less than asked (memory too fragmented or too
        small), other processes took the new pages GROW_TRIES times over, or there is
        no such pool.
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
    taken: frozenset[int]
    added, unwinding, taken = 0, True, frozenset()
    try:
        # SIGTERM and SIGHUP unwind the stack (finally blocks run) instead of
        # killing the process where it stands; under the CLI's
        # signals_interrupt() they already do, and nothing is taken over here.
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
                    # A signal during a give-back that ends the block normally still
                    # stops the run; during an unwind, the first exception goes on.
                    if late is not None and not unwinding:
                        raise late
    except Interrupted as e:
        if e.signum in taken:
            # The pool is restored and the default action back: die of the
            # signal now, as the process would have without the reservation.
            os.kill(os.getpid(), e.signum)
        raise
