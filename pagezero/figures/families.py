"""Kernel families, from the kernel registry's facts, never from names: what decides a
clearing kernel's shape over extents.

- whole-line: stores that only write zeros, a line or block per instruction (clzero, DC ZVA);
- non-temporal: streaming stores (the 2012 clear_page_nocache's movnti, arm64's stnp), slow
  while the buffer would fit in a cache and fast beyond the LLC;
- temporal string ops: temporal kernels that take any alignment: string instructions (rep
  stosb/stosq, FEAT_MOPS SET*) and libc's memset, the microcode deciding per length;
- temporal vector: the other temporal kernels, loops of aligned register stores.
"""

from __future__ import annotations

from collections.abc import Iterable

from pagezero.system.kernels import KINDS, Kernel, kernels

FAMILIES = ("temporal string ops", "temporal vector", "non-temporal", "whole-line")
# Names this machine's registry does not know (another architecture's, read from a file),
# or series that are no kernel at all.
OTHER = "other"


def kernel_family(kernel: Kernel) -> str:
    """The family of a registry row."""
    if kernel.zero_only:
        return "whole-line"
    if not kernel.temporal:
        return "non-temporal"
    return "temporal string ops" if kernel.align == 1 else "temporal vector"


def family_of(name: str) -> str:
    """The family of a kernel by name, OTHER for a name not in the registry."""
    known = (k for kind in KINDS for k in kernels(kind) if k.name == name)
    return next((kernel_family(k) for k in known), OTHER)


def group_by_family(names: Iterable[str]) -> dict[str, list[str]]:
    """Names by family, in FAMILIES order (then OTHER), each in the order given; none empty."""
    groups: dict[str, list[str]] = {f: [] for f in (*FAMILIES, OTHER)}
    for n in names:
        groups[family_of(n)].append(n)
    return {f: ns for f, ns in groups.items() if ns}
