"""How a kernel is drawn in every figure: its colour, marker and family (docs/figures.rst)."""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from pagezero.analysis.compare import kernel_registry
from pagezero.results.points import grouped
from pagezero.system.kernels import Kernel

# Okabe-Ito's eight (yellow last: the hardest to see on white), then Tol's muted seven.
_OKABE_ITO = "#E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #000000 #F0E442"
PALETTE = tuple(f"{_OKABE_ITO} #332288 #117733 #882255 #999933 #44AA99 #AA4499 #DDCC77".split())
# A second cue beside the colour, for readers (and printers) without it.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*", "d", "8", "H")
FAMILIES = ("temporal string ops", "temporal vector", "non-temporal", "whole-line")
# The family of names the registry does not know: another architecture's, or no kernel.
OTHER = "other"


def registry_names() -> tuple[str, ...]:
    """Every registered kernel's name, clearing ones first, each once: the colours' order."""
    return tuple(kernel_registry())


def _index(name: str) -> int:
    names = registry_names()
    if name in names:
        return names.index(name)
    return len(names) + zlib.crc32(name.encode()) % len(PALETTE)


def kernel_colour(name: str) -> str:
    """The colour of a kernel (or any series name) in every figure."""
    return PALETTE[_index(name) % len(PALETTE)]


def kernel_marker(name: str) -> str:
    """The marker of a kernel in every figure, its second cue."""
    return MARKERS[_index(name) % len(MARKERS)]


def kernel_family(kernel: Kernel) -> str:
    """The family of a registry row."""
    if kernel.zero_only:
        return "whole-line"
    if not kernel.temporal:
        return "non-temporal"
    return "temporal string ops" if kernel.align == 1 else "temporal vector"


def family_of(name: str) -> str:
    """The family of a kernel by name, OTHER for a name not in the registry."""
    known = kernel_registry().get(name)
    return kernel_family(known) if known else OTHER


def group_by_family(names: Iterable[str]) -> dict[str, list[str]]:
    """Names by family in FAMILIES order (then OTHER), each in the registry's order; none empty."""
    order = registry_names()
    ranked = sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))
    found = grouped(ranked, family_of)
    return {f: found[f] for f in (*FAMILIES, OTHER) if f in found}
