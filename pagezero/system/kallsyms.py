"""The running kernel's text symbols (/proc/kallsyms), and what they say of its clearing code.

A distribution backports whole series: the release string does not say which clear_page() a
kernel has, its symbols do. Before 7.0, x86-64's clear_page() calls one of three routines out
of line (clear_page_erms, clear_page_rep, clear_page_orig); from 7.0 ("x86/mm: Simplify
clear_page_*", the clear_pages() series) rep stos is inlined into its callers and only the
unrolled loop stays a routine, renamed __clear_pages_unrolled.
"""

from __future__ import annotations

import bisect
import functools
import platform

KALLSYMS = "/proc/kallsyms"
# Which clear_page() era a kernel is in, by the symbols only one era has.
ERA_SYMBOLS = {
    # 7.0's unrolled loop, under its merged name and its name in the posted series.
    "7.0": ("__clear_pages_unrolled", "memzero_page_aligned_unrolled", "clear_contig_highpages"),
    "pre-7.0": ("clear_page_erms", "clear_page_rep", "clear_page_orig"),
}


@functools.lru_cache(maxsize=4)
def table(path: str = KALLSYMS) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The kernel's text symbols: (sorted addresses, names), empty where kptr_restrict hides them.

    Raises OSError when the file cannot be read.
    """
    rows = []
    with open(path, encoding="ascii", errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW" and int(parts[0], 16):
                rows.append((int(parts[0], 16), parts[2]))
    rows.sort()
    return tuple(a for a, _ in rows), tuple(n for _, n in rows)


def symbol_of(ip: int, path: str = KALLSYMS) -> str:
    """The kernel text symbol at or below `ip`."""
    addresses, names = table(path)
    i = bisect.bisect_right(addresses, ip) - 1
    return names[i] if i >= 0 else "(not in kallsyms)"


def symbol_span(name: str, path: str = KALLSYMS) -> tuple[int, int] | None:
    """[start, end) of text symbol `name`: to the next symbol's address; None without it."""
    addresses, names = table(path)
    try:
        i = names.index(name)
    except ValueError:
        return None
    return addresses[i], addresses[i + 1] if i + 1 < len(addresses) else addresses[i] + 1


def clear_era(path: str = KALLSYMS, arch: str | None = None) -> tuple[str | None, str]:
    """The running kernel's clear_page() era from its symbols: ("7.0" or "pre-7.0", why), or
    (None, why) where the symbols cannot say (hidden, unreadable, or no telling symbol)."""
    arch = arch or platform.machine()
    try:
        _, names = table(path)
    except OSError as e:
        return None, f"{path} cannot be read ({e.strerror})"
    if not names:
        return None, f"{path} hides kernel addresses (kptr_restrict)"
    present = set(names)
    older = [s for s in ERA_SYMBOLS["pre-7.0"] if s in present]
    if older and arch == "x86_64":  # the three routines are x86-64's
        return "pre-7.0", f"{path} has {older[0]}"
    newer = [s for s in ERA_SYMBOLS["7.0"] if s in present]
    if newer:
        return "7.0", f"{path} has {newer[0]}"
    named = ", ".join(s for symbols in ERA_SYMBOLS.values() for s in symbols)
    return None, f"{path} has none of {named}"
