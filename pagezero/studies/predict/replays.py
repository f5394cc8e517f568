"""The kernel's clearing policies as replays in user space (pagezero.folio()), each with its
source, and the one the running kernel clears with (docs/predict.rst, "The policies")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pagezero._core import PagezeroError
from pagezero.measure.policy.orders import batch_bytes
from pagezero.system import kallsyms
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.system.machine import non_preempt_batch, release_tuple, thp_clear

# MAX_ORDER (MAX_PAGE_ORDER since 6.8, include/linux/mmzone.h): the buddy allocator's
# largest block, 2^10 4KB pages on x86-64 and arm64 with 4KB pages; beyond it, gigantic.
MAX_ORDER_BYTES = (1 << 10) * 4096

# kernel/Kconfig.preempt's models (lazy since 6.13), `choice "Preemption Model" default
# PREEMPT_NONE`; the cooperative ones clear in batches.
PREEMPT_MODES = ("none", "voluntary", "full", "lazy")
COOPERATIVE = ("none", "voluntary")
KERNEL_DEFAULT_PREEMPT = "none"
FIRST_RELEASE = (7, 0)  # the first with clear_contig_highpages()
# The 2012 proposal, pagezero's nocache-except-target walk (docs/predict.rst).
PROPOSAL_2012 = "Avoid cache trashing on clearing huge/gigantic page"
NOCACHE_STRATEGY = "nocache-except-target"


def gigantic(folio_bytes: int) -> bool:
    """True for a folio beyond MAX_ORDER (1GB on x86-64): the kernel clears a gigantic page."""
    return folio_bytes > MAX_ORDER_BYTES


@dataclass(frozen=True)
class Replay:
    """One kernel policy ("pre-7.0" or "7.0") for one folio size, as folio()
    replays it, with its source; preempt "any" where the model does not matter."""

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
        args: dict[str, object] = dict(strategy=self.strategy, batch=self.batch, kernel=self.kernel)
        if self.strategy == NOCACHE_STRATEGY:
            # The faulting page with clear_pages()'s stores, every other one non-temporal.
            args.update(kernel=clear_pages_kernel(), nt_kernel=self.kernel)
        return args

    def same_walk(self, folio_bytes: int) -> tuple[str, int, str]:
        """What decides the timed clear: replays equal in it measure the same."""
        # For 2MB folios the batches 32MB and "extent" are one walk: the whole folio.
        return walk_key(
            self.strategy, batch_bytes(self.batch, folio_bytes), self.kernel, folio_bytes
        )


def walk_key(strategy: str, batch: int, kernel: str, folio_bytes: int) -> tuple[str, int, str]:
    """A replay's walk as a key: strategy, batch in bytes (at most the folio), bulk kernel."""
    return (strategy, min(batch, folio_bytes), kernel)


# Each release series' walk of a folio up to MAX_ORDER (False) and beyond it (True).
_WALKS = {
    ("pre-7.0", False): ("page-at-a-time", "mm/memory.c process_huge_page()"),
    ("pre-7.0", True): ("front-to-back", "mm/memory.c clear_gigantic_page()"),
    ("7.0", False): ("neighbourhood-last", "mm/memory.c folio_zero_user()"),
    ("7.0", True): ("sequential", "mm/memory.c clear_contig_highpages()"),
}


def pre_7_0(folio_bytes: int, nt_kernel: str | None = None) -> Replay:
    """Before 7.0 (any preemption model); with `nt_kernel`, the 2012 proposal instead."""
    if nt_kernel is not None:
        return Replay(
            "pre-7.0", "any", NOCACHE_STRATEGY, "extent", nt_kernel, "proposed in 2012",
            f'"{PROPOSAL_2012}" (2012) clear_huge_page()', True,
        )  # fmt: skip
    strategy, source = _WALKS[("pre-7.0", gigantic(folio_bytes))]
    return Replay("pre-7.0", "any", strategy, "extent", clear_pages_kernel(), "before 7.0", source)


def from_7_0(folio_bytes: int, preempt: str, nt_kernel: str | None = None) -> Replay:
    """7.0 and later under `preempt`, with clear_page()'s kernel or non-temporal `nt_kernel`."""
    if preempt not in PREEMPT_MODES:
        raise ValueError(
            f"unknown preemption model {preempt!r} (known: {', '.join(PREEMPT_MODES)})"
        )
    batch = non_preempt_batch()["preset"] if preempt in COOPERATIVE else "extent"
    strategy, source = _WALKS[("7.0", gigantic(folio_bytes))]
    kernel, nt = nt_kernel or clear_pages_kernel(), nt_kernel is not None
    return Replay("7.0", preempt, strategy, batch, kernel, "7.0 and later", source, nt)


def nontemporal_kernels() -> list[str]:
    """Every non-temporal clear kernel this CPU runs but clear_pages()'s own (clzero too)."""
    own = clear_pages_kernel()
    return [k.name for k in kernels("clear") if k.available and not k.temporal and k.name != own]


def every_policy(folio_bytes: int, nt_kernel: str | None = None) -> list[Replay]:
    """pre-7.0, then 7.0 under each model, with clear_pages()'s kernel or with `nt_kernel`."""
    return [pre_7_0(folio_bytes, nt_kernel)] + [
        from_7_0(folio_bytes, mode, nt_kernel) for mode in PREEMPT_MODES
    ]


def nontemporal_policies(folio_bytes: int) -> list[Replay]:
    """every_policy()'s policies with each non-temporal kernel: the candidates for the fastest."""
    return [r for nt in nontemporal_kernels() for r in every_policy(folio_bytes, nt)]


@dataclass(frozen=True)
class RunningKernel:
    """The running kernel's release and preemption model (assumed, read, why they differ), and
    its clear_page() era ("7.0", "pre-7.0" or None) from its symbols, with why."""

    release: str
    preempt: str
    preempt_read: str
    preempt_note: str | None = None
    init_on_alloc: bool | None = None
    init_on_free: bool | None = None
    era: str | None = None
    era_why: str = ""

    def since(self, version: tuple[int, int]) -> bool:
        """True when the release is `version` or later (False when it cannot be read)."""
        release = release_tuple(self.release)
        return release is not None and release >= version

    @property
    def seven(self) -> bool:
        """True for a 7.0 policy: from the symbols, else the release (pre-7.0 unreadable)."""
        return self.era == "7.0" if self.era else self.since(FIRST_RELEASE)

    @property
    def era_words(self) -> str:
        """Which policy the kernel runs and how that was told, in words."""
        policy = "7.0" if self.seven else "pre-7.0"
        if self.era:
            return f"{policy} policy from the kernel's symbols ({self.era_why})"
        # A distribution backports series: the release is the fallback, not the rule.
        return f"{policy} policy from the release {self.release or '(unknown)'} ({self.era_why})"


def running_kernel(
    info: Mapping[str, Any], era: tuple[str | None, str] | None = None
) -> RunningKernel:
    """The running kernel from a machine() dict, its era from kallsyms.clear_era() (or `era`)."""
    release = str(info.get("kernel_release") or "")
    era_of, era_why = era if era is not None else kallsyms.clear_era()
    facts: dict[str, Any] = {
        f"init_on_{w}": (info.get(f"init_on_{w}") or {}).get("value") for w in ("alloc", "free")
    }
    facts.update(era=era_of, era_why=era_why)
    pre = info.get("preemption") or {}
    read, source = str(pre.get("model") or "unknown"), pre.get("source")
    if read in PREEMPT_MODES:
        return RunningKernel(release, read, read, **facts)
    if read == "rt":
        return RunningKernel(release, "full", read, "PREEMPT_RT clears as preempt=full", **facts)
    why = (
        "the model of this PREEMPT_DYNAMIC kernel needs debugfs "
        "(/sys/kernel/debug/sched/preempt), a preempt= boot parameter or the kernel config "
        "(/proc/config.gz, /boot/config-<release>)"
        if read == "dynamic"
        else f"no preemption model found ({source or 'debugfs, cmdline, uname -v, config'})"
    )
    note = f"assumed: {why}; none is kernel/Kconfig.preempt's default"
    return RunningKernel(release, KERNEL_DEFAULT_PREEMPT, read, note, **facts)


# Where the faults can be on hugetlb instead: its pool's folios fault with folio_zero_user().
_HUGETLB = (
    "reserve 2MB hugetlb pages (pagezero predict --reserve), whose faults clear once, "
    "with folio_zero_user()"
)


def check_thp_clears_once(kernel: RunningKernel) -> None:
    """PagezeroError where `kernel`'s THP faults do not clear with one folio_zero_user()."""
    if not kernel.init_on_alloc:
        return
    why = {
        "freed": "with init_on_alloc=1 and init_on_free=1 a THP fault clears nothing (its "
        "pages were zeroed when freed): no clear to predict",
        "allocator": "with init_on_alloc=1 a THP fault (6.13 and later) never calls "
        "folio_zero_user(): the page allocator clears the folio (post_alloc_hook() "
        "kernel_init_pages()), so no folio policy applies and none is projected",
        "both": f"with init_on_alloc=1 a THP fault before 6.13 (kernel {kernel.release or '?'}) "
        "clears its folio twice, the page allocator's kernel_init_pages() then "
        "folio_zero_user(): the fault is no one policy's clear",
    }.get(thp_clear(kernel.release, kernel.init_on_free))
    if why:  # "fault": init_on_free zeroed the pages, the fault clears once
        raise PagezeroError(f"{why}; {_HUGETLB}")


def replay_for(kernel: RunningKernel, folio_bytes: int, thp: bool = False) -> Replay:
    """The policy `kernel` clears a folio with (a THP one with `thp`: check_thp_clears_once())."""
    if thp:
        check_thp_clears_once(kernel)
    return from_7_0(folio_bytes, kernel.preempt) if kernel.seven else pre_7_0(folio_bytes)
