"""The kernel's clearing policies, each as a replay in user space with its source.

A fault on a huge page makes the kernel clear the whole folio before it maps it (mm/memory.c
folio_zero_user()). How it walks the folio depends on the kernel release and, since Linux
7.0, on the preemption model:

- before 7.0, folios up to MAX_ORDER: process_huge_page() (mm/memory.c), one clear_page()
  per 4KB page from the far end, converging on the faulting page, which is cleared last:
  pagezero's "page-at-a-time" strategy;
- before 7.0, folios beyond MAX_ORDER (gigantic pages, 1GB on x86-64): clear_gigantic_page()
  (mm/memory.c), one clear_page() per 4KB page from the first to the last: the
  "front-to-back" strategy;
- 7.0 and later, folios up to MAX_ORDER: folio_zero_user() (mm/memory.c) clears the ranges
  around the fault's neighbourhood as extents, the neighbourhood (fault +-2 pages) last:
  "neighbourhood-last";
- 7.0 and later, folios beyond MAX_ORDER: clear_contig_highpages() (mm/memory.c) front to
  back as one extent, in PROCESS_PAGES_NON_PREEMPT_BATCH units between resched points under
  preempt=none|voluntary (32MB where the architecture has its own clear_pages(), x86; one
  page elsewhere: machine.non_preempt_batch()) and whole under preempt=full|lazy:
  "sequential" with that batch;
- a THP folio with init_on_alloc=1 (6.13 and later): the page allocator zeroes it
  (mm/page_alloc.c post_alloc_hook() kernel_init_pages(), one clear_page() per page from the
  first to the last) and the fault skips folio_zero_user() (user_alloc_needs_zeroing()):
  "front-to-back" whatever the release. A hugetlb folio comes from its pool, not the page
  allocator: its fault always clears it with folio_zero_user().

The 7.0 policies are those of "mm: folio_zero_user: clear contiguous pages" (2025) as
merged. The batch presets (32MB, a page, the whole extent) are
pagezero.measure.policy.PRESETS, the one table of them; the instruction clear_page() uses
is the kernel registry's choice for this CPU (pagezero.system.kernels.clear_pages_kernel()),
never a name written here.

Each policy is also replayed with every non-temporal kernel the registry lists for this CPU,
so that predict can project it with the fastest of them: the question of "Avoid cache
trashing on clearing huge/gigantic page" (2012). Before 7.0 that is the 2012 patch itself
(clear_huge_page() page by page, the faulting page with cached stores and every other with
clear_page_nocache(): "nocache-except-target"); from 7.0 the same walk as the policy's, its
extents cleared with non-temporal stores.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagezero.measure.policy.orders import batch_bytes
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.system.machine import non_preempt_batch

# MAX_ORDER (MAX_PAGE_ORDER since 6.8) is 10 on x86-64 and on arm64 with 4KB pages
# (include/linux/mmzone.h, arch Kconfig ARCH_FORCE_MAX_ORDER): the buddy allocator's largest
# block, 2^10 4KB pages = 4MB. 2MB folios are within it, 1GB folios beyond it (gigantic).
MAX_ORDER_BYTES = (1 << 10) * 4096

# The preemption models the 7.0 policy depends on (kernel/Kconfig.preempt, with PREEMPT_LAZY
# since 6.13): the cooperative ones clear in 32MB units.
PREEMPT_MODES = ("none", "voluntary", "full", "lazy")
COOPERATIVE = ("none", "voluntary")

# The 7.0 release series: the first with clear_contig_highpages().
FIRST_RELEASE = (7, 0)

# The 2012 proposal: clear_huge_page() with clear_page_nocache() for every page but the
# faulting one, pagezero's "nocache-except-target" walk.
PROPOSAL_2012 = "Avoid cache trashing on clearing huge/gigantic page"
NOCACHE_STRATEGY = "nocache-except-target"


def gigantic(folio_bytes: int) -> bool:
    """True for a folio beyond MAX_ORDER (1GB on x86-64): the kernel clears a gigantic page."""
    return folio_bytes > MAX_ORDER_BYTES


@dataclass(frozen=True)
class Replay:
    """One kernel policy for one folio size, as pagezero.folio() replays it, with its source."""

    # policy: "pre-7.0" or "7.0"; preempt: "any" where the model does not matter; strategy
    # and batch: folio()'s; kernel: the stores of the bulk of the clear, clear_pages()'s or,
    # with nontemporal, a non-temporal one (the 2012 proposal's question).

    policy: str
    preempt: str
    strategy: str
    batch: str
    kernel: str
    release: str
    source: str
    nontemporal: bool = False

    @property
    def stores(self) -> str:
        """Whose stores clear the folio: "clear_pages()" or "non-temporal"."""
        return "non-temporal" if self.nontemporal else "clear_pages()"

    def folio_args(self) -> dict[str, object]:
        """The replay as pagezero.folio()'s arguments (size and loops aside)."""
        if self.strategy == NOCACHE_STRATEGY:
            # The faulting page with clear_pages()'s stores, every other one non-temporal.
            nt = {"kernel": clear_pages_kernel(), "nt_kernel": self.kernel}
            return {"strategy": self.strategy, "batch": self.batch, **nt}
        return {"strategy": self.strategy, "batch": self.batch, "kernel": self.kernel}

    def same_walk(self, folio_bytes: int) -> tuple[str, int, str]:
        """What decides the timed clear: replays equal in it measure the same."""
        # For 2MB folios the batches 32MB and "extent" are one walk: the whole folio.
        return walk_key(
            self.strategy, batch_bytes(self.batch, folio_bytes), self.kernel, folio_bytes
        )


def walk_key(strategy: str, batch: int, kernel: str, folio_bytes: int) -> tuple[str, int, str]:
    """A replay's walk as a key: strategy, batch in bytes (at most the folio), bulk kernel."""
    return (strategy, min(batch, folio_bytes), kernel)


def pre_7_0(folio_bytes: int, nt_kernel: str | None = None) -> Replay:
    """Before 7.0: process_huge_page() up to MAX_ORDER, clear_gigantic_page() beyond; with
    `nt_kernel`, the 2012 proposal's clear_huge_page() instead."""
    # The preemption model plays no part: a cond_resched() between pages.
    if nt_kernel is not None:
        # "Avoid cache trashing on clearing huge/gigantic page" (2012): page by page, the
        # faulting page cached, the rest with clear_page_nocache(), for 2MB and gigantic alike.
        return Replay(
            "pre-7.0", "any", NOCACHE_STRATEGY, "extent", nt_kernel, "proposed in 2012",
            f'"{PROPOSAL_2012}" (2012) clear_huge_page()', True,
        )  # fmt: skip
    if gigantic(folio_bytes):
        strategy, source = "front-to-back", "mm/memory.c clear_gigantic_page()"
    else:
        strategy, source = "page-at-a-time", "mm/memory.c process_huge_page()"
    return Replay("pre-7.0", "any", strategy, "extent", clear_pages_kernel(), "before 7.0", source)


def from_7_0(folio_bytes: int, preempt: str, nt_kernel: str | None = None) -> Replay:
    """7.0 and later under `preempt`, with clear_page()'s kernel or non-temporal `nt_kernel`."""
    if preempt not in PREEMPT_MODES:
        raise ValueError(
            f"unknown preemption model {preempt!r} (known: {', '.join(PREEMPT_MODES)})"
        )
    batch = non_preempt_batch()["preset"] if preempt in COOPERATIVE else "extent"
    if gigantic(folio_bytes):
        strategy, source = "sequential", "mm/memory.c clear_contig_highpages()"
    else:
        strategy, source = "neighbourhood-last", "mm/memory.c folio_zero_user()"
    kernel = nt_kernel or clear_pages_kernel()
    nt = nt_kernel is not None
    return Replay("7.0", preempt, strategy, batch, kernel, "7.0 and later", source, nt)


# "mm: avoid zeroing user movable page twice with init_on_alloc=1" (6.13): from it on a THP
# fault leaves the clear to an allocator that zeroes (user_alloc_needs_zeroing()).
INIT_ON_ALLOC_SKIPS_FROM = (6, 13)
ALLOCATOR_SOURCE = (
    "mm/page_alloc.c post_alloc_hook() kernel_init_pages(), init_on_alloc=1: "
    "the THP fault skips folio_zero_user() (user_alloc_needs_zeroing())"
)


def allocator_zeroing() -> Replay:
    """The allocator's clear of a THP folio under init_on_alloc: page by page, front to back."""
    kernel = clear_pages_kernel()
    return Replay(
        "init_on_alloc",
        "any",
        "front-to-back",
        "extent",
        kernel,
        "6.13 and later",
        ALLOCATOR_SOURCE,
    )


def nontemporal_kernels() -> list[str]:
    """Every non-temporal clear kernel this CPU runs but clear_pages()'s own, from the registry."""
    # Zero-only ones (clzero) included: a page is cleared to zeros.
    own = clear_pages_kernel()
    return [k.name for k in kernels("clear") if k.available and not k.temporal and k.name != own]


def every_policy(folio_bytes: int) -> list[Replay]:
    """pre-7.0, then 7.0 under each preemption model, with clear_pages()'s kernel."""
    return [pre_7_0(folio_bytes)] + [from_7_0(folio_bytes, mode) for mode in PREEMPT_MODES]


def nontemporal_policies(folio_bytes: int) -> list[Replay]:
    """every_policy()'s policies with each non-temporal kernel: the candidates for the fastest."""
    found = []
    for nt in nontemporal_kernels():
        found.append(pre_7_0(folio_bytes, nt))
        found += [from_7_0(folio_bytes, mode, nt) for mode in PREEMPT_MODES]
    return found
