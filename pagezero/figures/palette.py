"""One colour per kernel, the same in every figure, safe for colour-blind readers.

The colours are Okabe and Ito's eight ("Color Universal Design", 2008), then
Paul Tol's "muted" scheme (SRON technical note, "Colour schemes", 2021) for the
kernels beyond eight: both are told apart with the common colour vision
deficiencies. A kernel's colour is its place in the kernel registry
(pagezero.system.kernels.kernels(), the order of ``arch/*/kernels.def``), so that
x86-64-stosb is drawn in one colour in the extents, chunk and comparison
figures of every report of a machine. A name the registry does not know (a
fault workload, a kernel of another architecture read from a file) gets a
colour from a stable hash of its name: the same in every figure too.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from pagezero.system.kernels import KINDS, kernels

__all__ = ["PALETTE", "MARKERS", "kernel_colour", "kernel_marker", "registry_names"]

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
    """Every registered kernel's name, clearing ones first, each once.

    Returns
    -------
    tuple of str
        The order the colours are handed out in.
    """
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
    """The colour of a kernel (or any series name) in every figure.

    Parameters
    ----------
    name : str
        A kernel's name (``x86-64-stosb``), or any other series' name.

    Returns
    -------
    str
        A ``#RRGGBB`` colour of :data:`PALETTE`.
    """
    return PALETTE[_index(name) % len(PALETTE)]


def kernel_marker(name: str) -> str:
    """The marker of a kernel in every figure (:data:`MARKERS`), its second cue.

    Parameters
    ----------
    name : str
        As for :func:`kernel_colour`.

    Returns
    -------
    str
        A matplotlib marker.
    """
    return MARKERS[_index(name) % len(MARKERS)]


def colours(names: Iterable[str]) -> dict[str, str]:
    """:func:`kernel_colour` of each name.

    Parameters
    ----------
    names : iterable of str

    Returns
    -------
    dict
    """
    return {n: kernel_colour(n) for n in names}
