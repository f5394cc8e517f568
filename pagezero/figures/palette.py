"""One colour per kernel, the same in every figure, safe for colour-blind readers.

Okabe and Ito's eight colours ("Color Universal Design", 2008), then Paul Tol's "muted"
scheme (SRON, "Colour schemes", 2021) beyond eight. A kernel's colour is its place in the
registry (the order of ``arch/*/kernels.def``), so x86-64-stosb has one colour in every
figure of a machine; a name the registry does not know (a fault workload, another
architecture's kernel read from a file) gets one from a stable hash of its name.
"""

from __future__ import annotations

import zlib

from pagezero.system.kernels import KINDS, kernels

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


def registry_names() -> tuple[str, ...]:
    """Every registered kernel's name, clearing ones first, each once: the colours' order."""
    names: list[str] = []
    for kind in KINDS:
        names += [k.name for k in kernels(kind) if k.name not in names]
    return tuple(names)


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
