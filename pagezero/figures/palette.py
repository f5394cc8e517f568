"""How a kernel is drawn, the same in every figure: its colour, its marker and its family.

Colours: Okabe and Ito's eight ("Color Universal Design", 2008), then Paul Tol's "muted"
scheme (SRON, "Colour schemes", 2021) beyond eight, safe for colour-blind readers. A
kernel's colour is its place in the registry (the order of ``arch/*/kernels.def``), so
x86-64-stosb has one colour in every figure of a machine; a name the registry does not know
(a fault workload, another architecture's kernel read from a file) gets one from a stable
hash of its name.

Families, from the registry's facts, never from names, decide a clearing kernel's shape
over extents:

- whole-line: stores that only write zeros, a line or block per instruction (clzero, DC ZVA);
- non-temporal: streaming stores (the 2012 clear_page_nocache's movnti, arm64's stnp), slow
  while the buffer would fit in a cache and fast beyond the LLC;
- temporal string ops: temporal kernels that take any alignment: string instructions (rep
  stosb/stosq, FEAT_MOPS SET*) and libc's memset, the microcode deciding per length;
- temporal vector: the other temporal kernels, loops of aligned register stores.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from pagezero.system.kernels import KINDS, Kernel, kernels

PALETTE = (
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#009E73",  # bluish green
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#000000",  # black
    "#F0E442",  # yellow: last of Okabe-Ito's, the hardest to see on white
    "#332288",  # Tol muted: indigo
    "#117733",  # green
    "#882255",  # wine
    "#999933",  # olive
    "#44AA99",  # teal
    "#AA4499",  # purple
    "#DDCC77",  # sand
)
# A second cue beside the colour, for readers (and printers) without it.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*", "d", "8", "H")
FAMILIES = ("temporal string ops", "temporal vector", "non-temporal", "whole-line")
# Names this machine's registry does not know (another architecture's, read from a file),
# or series that are no kernel at all.
OTHER = "other"


def _registry() -> dict[str, Kernel]:
    """Every registered kernel by name, clearing ones first, each once."""
    found: dict[str, Kernel] = {}
    for kind in KINDS:
        for k in kernels(kind):
            found.setdefault(k.name, k)
    return found


def registry_names() -> tuple[str, ...]:
    """Every registered kernel's name, clearing ones first, each once: the colours' order."""
    return tuple(_registry())


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
    known = _registry().get(name)
    return kernel_family(known) if known else OTHER


def group_by_family(names: Iterable[str]) -> dict[str, list[str]]:
    """Names by family, in FAMILIES order (then OTHER), each in the order given; none empty."""
    groups: dict[str, list[str]] = {f: [] for f in (*FAMILIES, OTHER)}
    for n in names:
        groups[family_of(n)].append(n)
    return {f: ns for f, ns in groups.items() if ns}
