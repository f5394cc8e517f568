"""The hugepages the fault and predict studies map: reserved around each (root), or a hint."""

import contextlib

from pagezero._core import MappingError, PagezeroError
from pagezero.measure import fault
from pagezero.studies.report.faults import FAULT_PAGES
from pagezero.studies.report.predict import fault_size
from pagezero.system import hugepages
from pagezero.system.machine import machine
from pagezero.units import parse_size

_HUGETLB = tuple(dict.fromkeys(page for page, _ in FAULT_PAGES if page != "4KB"))


def study_needs(name, cfg, quick, info=None):
    """{page: pages} study `name` maps at once at `cfg`'s sizes on machine() `info` (default:
    this one); {} for the others."""
    # As the studies size them: max(fault_size, one page) per loop, predict's at least twice
    # the LLC and 1GB only at the full scale, its replays one folio once the faults are unmapped.
    if name == "predict":
        info = machine() if info is None else info
        pages = ("2MB",) if quick else ("2MB", "1GB")
        return {p: hugepages.pages_needed(fault_size(p, cfg, info), p) for p in pages}
    pages = _HUGETLB if name == "faults" else ()
    return {p: hugepages.pages_needed(max(cfg["fault_size"], parse_size(p)), p) for p in pages}


def report_needs(cfg, quick, names):
    """The most pages of each size any of the studies `names` maps at once."""
    most = {}
    for name in names:
        for page, n in study_needs(name, cfg, quick).items():
            most[page] = max(most.get(page, 0), n)
    return most


def _shortage(needs):
    """(the sizes short of pages, the commands root would run), or None."""
    short = hugepages.lacking(needs)
    if not short:
        return None
    return " and ".join(short), "; ".join(f"echo {n} > {path}" for n, path in short.values())


def root_hint(needs):
    """For a user who is not root: the sizes skipped and what root would run (or None)."""
    found = _shortage(needs)
    if found is None:
        return None
    sizes, commands = found
    return (
        f"not root: the {sizes} fault sizes lack hugepages and are skipped; run as root "
        f"(the report then reserves them and gives them back), or first as root: {commands}"
    )


def check_root_can_reserve(needs):
    """PagezeroError, saying what root would run, where the pools lack pages of `needs`."""
    found = _shortage(needs)
    if found is not None:
        sizes, commands = found
        raise PagezeroError(
            f"reserving the report's {sizes} hugepages needs root; run as root, or first "
            f"as root: {commands}"
        )


def reservation_line(study, reservations):
    """What was reserved for `study`, in one line; None when nothing was asked."""
    if not reservations:
        return None
    had = [r for r in reservations if not r.failed]
    parts = []
    if had:
        added = sum(r.added for r in had)
        counts = " and ".join(f"{r.needed} {r.page}" for r in had)
        plural = "s" * (sum(r.needed for r in had) != 1)
        parts.append(
            f"{counts} hugepage{plural} made available for the {study} study "
            f"({added} added to the pools, given back when it ends)"
        )
    parts += [f"{r.page} pages not reserved: {r.failed}" for r in reservations if r.failed]
    return "; ".join(parts)


@contextlib.contextmanager
def pools_for(name, cfg, quick, reserve):
    """Around study `name`: the hugepages it lacks reserved, warmed, given back; yields a line."""
    needs = study_needs(name, cfg, quick)
    short = hugepages.lacking(needs)
    if not reserve or not short:
        yield None
        return
    asked = {page: needs[page] for page in needs if page in short}
    with hugepages.reserve_where_possible(asked) as done:
        for r in done:
            if r.added:
                # Faulted in once, untimed, as --reserve does: a VM's host faults guest memory
                # in on its first touch. Pages taken meanwhile: the study's check says so.
                with contextlib.suppress(MappingError):
                    fault.warm(fault.plan(r.needed * parse_size(r.page), r.page, 1))
        yield reservation_line(name, done)
