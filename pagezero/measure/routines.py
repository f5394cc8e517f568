"""Where the kernel clears a faulted page: its routines by architecture and clear_page() era
(pagezero.system.kallsyms.clear_era()), and how a sampled instruction is told to be the clear.
See docs/measuring.rst."""

from __future__ import annotations

import platform
from dataclasses import dataclass


@dataclass(frozen=True)
class Routine:
    """A kernel function the page's clearing runs in."""

    symbol: str
    arch: str  # platform.machine() it is for, or "any"
    era: str | None  # the clear_era() it clears in, None in every era
    instruction: str
    source: str
    # The clear is inlined into it (7.0's clear_pages()): only its samples at a rep stos are
    # clearing, the rest are its own work. False: an out-of-line routine, every sample clears.
    inlined: bool = False


_PAGE_64 = "arch/x86/lib/clear_page_64.S"
_X86_INLINE = "arch/x86/include/asm/page_64.h"
_HIGHMEM = f"include/linux/highmem.h, clear_pages() inlined from {_X86_INLINE}"
_MEMORY = f"mm/memory.c, clear_pages() inlined from {_X86_INLINE}"
# Every anonymous 4KB fault on x86, arm64 and s390 allocates with __GFP_ZERO
# (vma_alloc_zeroed_movable_folio), so want_init_on_alloc() has post_alloc_hook() clear the
# page there, init_on_alloc or not; init_on_alloc adds every other allocation.
_GFP_ZERO = f"mm/page_alloc.c (the __GFP_ZERO clear), clear_pages() inlined from {_X86_INLINE}"
_ARM_CLEAR, _ARM_MEMSET = "arch/arm64/lib/clear_page.S", "arch/arm64/lib/memset.S"
_ARM_WAYS = "MOPS, dc zva or stnp"  # chosen inside clear_page: the symbol does not say
_INLINED = "inlined clear_pages()"
_R = Routine
CLEARING: tuple[Routine, ...] = (
    # Before 7.0 x86-64's clear_page() is an ALTERNATIVE_2 call of one of these three; their
    # callers (folio_zero_user, kernel_init_pages...) do not clear themselves.
    _R("clear_page_erms", "x86_64", "pre-7.0", "rep stosb", _PAGE_64),
    _R("clear_page_rep", "x86_64", "pre-7.0", "rep stosq", _PAGE_64),
    _R("clear_page_orig", "x86_64", "pre-7.0", "unrolled movq", _PAGE_64),
    # From 7.0 rep stos is inlined into clear_pages()'s callers; only the unrolled loop (for
    # CPUs with neither ERMS nor REP_GOOD) stays a routine.
    _R("__clear_pages_unrolled", "x86_64", "7.0", "unrolled movq", _PAGE_64),
    # The same loop's name in the series as posted (seeds/000, "x86/clear_page: ...").
    _R("memzero_page_aligned_unrolled", "x86_64", "7.0", "unrolled movq", _PAGE_64),
    _R("folio_zero_user", "x86_64", "7.0", _INLINED, _MEMORY, True),
    _R("clear_contig_highpages", "x86_64", "7.0", _INLINED, _MEMORY, True),  # gigantic folios
    _R("clear_user_highpages", "x86_64", "7.0", _INLINED, _HIGHMEM, True),
    _R("clear_user_highpage", "x86_64", "7.0", _INLINED, _HIGHMEM, True),
    _R("clear_pages", "x86_64", "7.0", _INLINED, _X86_INLINE, True),  # an out-of-line copy
    _R("kernel_init_pages", "x86_64", "7.0", _INLINED, _GFP_ZERO, True),
    _R("post_alloc_hook", "x86_64", "7.0", _INLINED, _GFP_ZERO, True),  # kernel_init_pages inlined
    _R("clear_page", "aarch64", None, _ARM_WAYS, _ARM_CLEAR),
    _R("__pi_clear_page", "aarch64", None, _ARM_WAYS, _ARM_CLEAR),
    _R("memset", "aarch64", None, "memset", _ARM_MEMSET),
    _R("__pi_memset", "aarch64", None, "memset", _ARM_MEMSET),
    _R("__memset", "aarch64", None, "memset", _ARM_MEMSET),
)
# Words of the registry's description of the clear kernel running the same instruction.
REGISTRY_WORDS = {"rep stosb": "rep stosb,", "rep stosq": "rep stosq,"}
REGISTRY_WORDS["unrolled movq"] = "aligned_unrolled"


def clearing_routines(arch: str | None = None, era: str | None = None) -> dict[str, Routine]:
    """{symbol: Routine} of CLEARING on `arch` (default: this machine's) in clear_era() `era`.

    era None (the kernel's symbols did not say) gives every era's routines: the out-of-line
    ones clear wherever they are present, the inlined ones only at a rep stos.
    """
    arch = arch or platform.machine()
    return {
        r.symbol: r
        for r in CLEARING
        if r.arch in (arch, "any") and (era is None or r.era is None or r.era == era)
    }


# Legacy prefixes an instruction may carry (segment, operand and address size, lock, rep).
_PREFIXES = frozenset(b"\xf2\xf3\x2e\x36\x3e\x26\x64\x65\x66\x67\xf0")


def rep_stos(code: bytes) -> str | None:
    """The rep stos `code` starts with ("rep stosb", "rep stosq"...), or None.

    The IP of a string instruction interrupted midway is that instruction's own, so a sample
    in it reads f3 aa (rep stosb) or f3 48 ab (rep stosq), with optional prefixes.
    """
    i = next((i for i, b in enumerate(code) if b not in _PREFIXES), len(code))
    rex = code[i] if i < len(code) and 0x40 <= code[i] <= 0x4F else 0
    op = code[i + 1 if rex else i : i + 2 if rex else i + 1]
    if op not in (b"\xaa", b"\xab") or 0xF3 not in code[:i]:
        return None
    if op == b"\xaa":
        return "rep stosb"
    return "rep stosq" if rex & 8 else "rep stosw" if 0x66 in code[:i] else "rep stosl"
