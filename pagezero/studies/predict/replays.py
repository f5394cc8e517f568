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
  back as one extent, in 32MB units (PROCESS_PAGES_NON_PREEMPT_BATCH) between resched points
  under preempt=none|voluntary and whole under preempt=full|lazy: "sequential" with that
  batch.

The 7.0 policies are those of "mm: folio_zero_user: clear contiguous pages" (2025) as
merged. The batch presets (32MB, the whole extent) are pagezero.measure.policy.PRESETS, the
one table of them; the instruction clear_page() uses is the kernel registry's choice for
this CPU (pagezero.system.kernels.clear_pages_kernel()), never a name written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagezero.measure.policy.orders import batch_bytes
from pagezero.system.kernels import clear_pages_kernel, kernels

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


def gigantic(folio_bytes: int) -> bool:
    """True for a folio beyond MAX_ORDER (1GB on x86-64): the kernel clears a gigantic page."""
    return folio_bytes > MAX_ORDER_BYTES


@dataclass(frozen=True)
class Replay:
    """One kernel policy for one folio size, as pagezero.folio() replays it, with its source."""

    # policy: "pre-7.0", "7.0", or "7.0+<kernel>" for a projection with a non-temporal kernel;
    # preempt: "any" where the model does not matter; strategy and batch: folio()'s.

    policy: str
    preempt: str
    strategy: str
    batch: str
    kernel: str
    release: str
    source: str

    def folio_args(self) -> dict[str, object]:
        """The replay as pagezero.folio()'s arguments (size and loops aside)."""
        return {"strategy": self.strategy, "batch": self.batch, "kernel": self.kernel}

    def same_walk(self, folio_bytes: int) -> tuple[str, int, str]:
        """What decides the timed clear: replays equal in it measure the same."""
        # For 2MB folios the batches 32MB and "extent" are one walk: the whole folio.
        return walk_key(
            self.strategy, batch_bytes(self.batch, folio_bytes), self.kernel, folio_bytes
        )


def walk_key(strategy: str, batch: int, kernel: str, folio_bytes: int) -> tuple[str, int, str]:
    """A replay's walk as a key: strategy, batch in bytes (at most the folio), kernel."""
    return (strategy, min(batch, folio_bytes), kernel)


def pre_7_0(folio_bytes: int) -> Replay:
    """Before 7.0: process_huge_page() up to MAX_ORDER, clear_gigantic_page() beyond."""
    # The preemption model plays no part: a cond_resched() between pages.
    if gigantic(folio_bytes):
        strategy, source = "front-to-back", "mm/memory.c clear_gigantic_page()"
    else:
        strategy, source = "page-at-a-time", "mm/memory.c process_huge_page()"
    return Replay("pre-7.0", "any", strategy, "extent", clear_pages_kernel(), "before 7.0", source)


def from_7_0(folio_bytes: int, preempt: str, kernel: str | None = None) -> Replay:
    """7.0 and later under `preempt`, with clear_page()'s kernel or another `kernel`."""
    if preempt not in PREEMPT_MODES:
        raise ValueError(
            f"unknown preemption model {preempt!r} (known: {', '.join(PREEMPT_MODES)})"
        )
    batch = "32MB" if preempt in COOPERATIVE else "extent"
    if gigantic(folio_bytes):
        strategy, source = "sequential", "mm/memory.c clear_contig_highpages()"
    else:
        strategy, source = "neighbourhood-last", "mm/memory.c folio_zero_user()"
    name = "7.0" if kernel is None else f"7.0+{kernel}"
    return Replay(
        name, preempt, strategy, batch, kernel or clear_pages_kernel(), "7.0 and later", source
    )


def nontemporal_kernels() -> list[str]:
    """Every non-temporal clear kernel this CPU runs, from the registry."""
    return [k.name for k in kernels("clear") if k.available and not k.temporal]


def every_policy(folio_bytes: int) -> list[Replay]:
    """pre-7.0, 7.0 under each model, for gigantic folios 7.0 with each non-temporal kernel."""
    # Non-temporal stores: proposed for gigantic pages since "Avoid cache trashing on clearing
    # huge/gigantic page" (2012).
    found = [pre_7_0(folio_bytes)]
    found += [from_7_0(folio_bytes, mode) for mode in PREEMPT_MODES]
    if gigantic(folio_bytes):
        for nt in nontemporal_kernels():
            found += [from_7_0(folio_bytes, mode, nt) for mode in PREEMPT_MODES]
    return found
