"""Inside the fault: a faults() run's samples named and grouped. See docs/measuring.rst."""

from __future__ import annotations

import errno
import os
import platform
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero.files import read_int
from pagezero.results.points import median_interval
from pagezero.results.resultset import Result, ResultSet
from pagezero.system import kallsyms
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.system.machine import release_tuple


@dataclass(frozen=True)
class Routine:
    """A kernel routine whose samples are the page's clearing."""

    symbol: str
    arch: str  # platform.machine() it is for, or "any"
    since: tuple[int, int] | None  # the release it clears from (7.0's inlined clear_pages())
    instruction: str
    # Words of the registry's description of the same clear kernel, where the symbol says which.
    registry: str | None
    source: str


_PAGE_64 = "arch/x86/lib/clear_page_64.S"
_X86_INLINE = "arch/x86/include/asm/page_64.h"
_HIGHMEM = f"include/linux/highmem.h, clear_pages() inlined from {_X86_INLINE}"
_ARM_CLEAR, _ARM_MEMSET = "arch/arm64/lib/clear_page.S", "arch/arm64/lib/memset.S"
_ARM_WAYS = "MOPS, dc zva or stnp"  # chosen inside clear_page: the symbol does not say
_INLINED = "inlined clear_pages()"
_INIT_ON_ALLOC = "clear_highpage() per page (init_on_alloc)"
_R = Routine
CLEARING: tuple[Routine, ...] = (
    # Before 7.0, x86-64's clear_page() is an ALTERNATIVE_2 call of one of these three.
    _R("clear_page_erms", "x86_64", None, "rep stosb", "rep stosb,", _PAGE_64),
    _R("clear_page_rep", "x86_64", None, "rep stosq", "rep stosq,", _PAGE_64),
    _R("clear_page_orig", "x86_64", None, "unrolled movq", "aligned_unrolled", _PAGE_64),
    # From 7.0 the instructions are inlined: the samples land in the function calling them.
    _R("folio_zero_user", "x86_64", (7, 0), _INLINED, None, f"mm/memory.c, from {_X86_INLINE}"),
    _R("clear_pages", "x86_64", (7, 0), "rep stosb or rep stosq", None, _X86_INLINE),
    _R("clear_user_highpages", "x86_64", (7, 0), _INLINED, None, _HIGHMEM),
    _R("clear_user_highpage", "x86_64", (7, 0), _INLINED, None, _HIGHMEM),
    _R("clear_page", "aarch64", None, _ARM_WAYS, None, _ARM_CLEAR),
    _R("__pi_clear_page", "aarch64", None, _ARM_WAYS, None, _ARM_CLEAR),
    _R("memset", "aarch64", None, "memset", None, _ARM_MEMSET),
    _R("__pi_memset", "aarch64", None, "memset", None, _ARM_MEMSET),
    _R("__memset", "aarch64", None, "memset", None, _ARM_MEMSET),
    # init_on_alloc: the allocator zeroes the folio (post_alloc_hook) and the fault does not.
    _R("kernel_init_pages", "any", None, _INIT_ON_ALLOC, None, "mm/page_alloc.c"),
)

# The rest of the fault path, by what it is: the first group whose pattern matches the
# symbol (re.search), so the more specific come first.
GROUPS: dict[str, str] = {
    "memcg accounting": r"mem_cgroup|memcg|lruvec|obj_cgroup|charge|throttle_swaprate",
    "page tables and their locks": r"pte|pmd|pud|p4d|pgd|pgtable|page_table|_raw_spin|spin_lock"
    r"|queued_spin|tlb",
    "page allocation": r"alloc_pages|alloc_frozen_pages|alloc_folio|get_page_from_freelist|rmqueue"
    r"|prep_new|post_alloc_hook|free_pages|free_unref|hugetlb_folio|dequeue_hugetlb|alloc_hugetlb"
    r"|buddy|__rmqueue|zone_|pcp|alloc_anon_folio|folio_prealloc",
    "fault entry and return": r"page_fault|do_user_addr_fault|handle_mm_fault|do_anonymous_page"
    r"|hugetlb_fault|hugetlb_no_page|do_huge_pmd|irqentry|error_entry|error_return|asm_exc"
    r"|lock_vma|vma_start_read|vma_end_read|mas_walk|find_vma|get_user_pages|follow_page"
    r"|restore_regs|swapgs|fault",
}
CLEARING_GROUP = "clearing"
USER_GROUP = "user space"
OTHER_GROUP = "other"
GROUP_NAMES = (CLEARING_GROUP, *GROUPS, USER_GROUP, OTHER_GROUP)
_GROUP_RES = tuple((g, re.compile(p)) for g, p in GROUPS.items())
_ELSEWHERE = "(hypervisor or guest)"


def clearing_routines(arch: str | None = None, release: tuple[int, int] | None = None) -> dict:
    """{symbol: Routine} of CLEARING clearing on `arch` and `release` (default: this machine's)."""
    arch = arch or platform.machine()
    release = release or release_tuple(platform.release()) or (0, 0)
    return {
        r.symbol: r
        for r in CLEARING
        if r.arch in (arch, "any") and (r.since is None or release >= r.since)
    }


def group_of(symbol: str, routines: Mapping[str, Routine] | None = None) -> str:
    """The group a sampled symbol belongs to (GROUP_NAMES)."""
    if symbol in (routines if routines is not None else clearing_routines()):
        return CLEARING_GROUP
    if symbol == USER_GROUP:
        return USER_GROUP
    return next((g for g, pattern in _GROUP_RES if pattern.search(symbol)), OTHER_GROUP)


def refusal() -> str | None:
    """Why kernel addresses cannot be named here (kptr_restrict, no /proc/kallsyms), or None."""
    try:
        if kallsyms.table()[0]:
            return None
    except OSError as e:
        return (
            f"/proc/kallsyms cannot be read ({e.strerror}): mount /proc, or run outside a container"
        )
    kptr = read_int("/proc/sys/kernel/kptr_restrict")
    return (
        f"/proc/kallsyms hides kernel addresses (kptr_restrict {kptr}): run as root, "
        "or sysctl kernel.kptr_restrict=0"
    )


def refused_why(err: int) -> str:
    """One line: why perf_event_open(2) refused with errno `err`, and what would allow it."""
    paranoid = read_int("/proc/sys/kernel/perf_event_paranoid")
    if err in (errno.EACCES, errno.EPERM):
        if os.geteuid() != 0 and paranoid is not None and paranoid > 1:
            return (
                f"perf_event_paranoid is {paranoid} and this user is not root: run as root, "
                "or sysctl kernel.perf_event_paranoid=1"
            )
        return (
            "perf_event_open(2) was refused (a container's seccomp filter or a security "
            "module): run outside the container, or allow perf_event_open"
        )
    if err in (errno.ENOENT, errno.ENODEV, errno.EOPNOTSUPP, errno.ENOSYS):
        return (
            "this kernel offers no perf events to sample with (CONFIG_PERF_EVENTS, or a "
            "container without them): run on a kernel or host that has them"
        )
    return f"perf_event_open(2) failed: {os.strerror(err)}"


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson interval of a share k/n (scipy's binomtest)."""
    from scipy import stats as sps

    ci = sps.binomtest(k, n).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)


def summarize(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A run's details["profile"] from bench_fault's "profile" (its keys: docs/measuring.rst)."""
    if "refused" in raw:
        return {"refused": refused_why(raw["refused"])}
    counts: Counter[str] = Counter()
    for ip, n in Counter(raw["kernel_ips"]).items():  # each address looked up once
        counts[kallsyms.symbol_of(ip)] += n
    counts += Counter({USER_GROUP: raw["user"], _ELSEWHERE: raw["other"]})  # those not 0
    total = sum(counts.values())
    if not total:
        return {"refused": "no samples were taken (the timed loops were shorter than a sample)"}
    routines = clearing_routines()
    symbols: list[dict[str, Any]] = [
        {"symbol": s, "share": n / total, "group": group_of(s, routines)}
        for s, n in counts.most_common()
    ]
    groups = dict.fromkeys(GROUP_NAMES, 0.0)
    for s in symbols:
        groups[s["group"]] += s["share"]
    seen = [(s, routines[s["symbol"]]) for s in symbols if s["group"] == CLEARING_GROUP]
    clearing = sum(counts[s["symbol"]] for s, _ in seen)
    return {
        "clearing_share": clearing / total,
        "clearing_interval": list(wilson(clearing, total)),
        "clearing_routines": [
            dict(symbol=s["symbol"], share=s["share"], instruction=r.instruction, source=r.source)
            for s, r in seen
        ],
        "samples": total,
        "groups": groups,
        "symbols": symbols,
        "event": raw["event"],
        "lost": raw["lost"],
    }


Profiled = Result | ResultSet | Mapping[str, Any] | Sequence[Result]


def _profiles(x: Profiled) -> list[Mapping[str, Any]]:
    """The profiles (details["profile"], refused ones too) of a Result, ResultSet, list, or one."""
    if isinstance(x, Mapping):
        return [x]
    results = [x] if isinstance(x, Result) else list(x.results if isinstance(x, ResultSet) else x)
    return [r.details["profile"] for r in results if "profile" in r.details]


def clearing_share(x: Profiled) -> tuple[float, float, float] | None:
    """The kernel's clearing share of the fault time, with its 95% interval.

    Parameters
    ----------
    x : Result, ResultSet, list of Result, or a details["profile"] dict
        faults(profile=True)'s runs.

    Returns
    -------
    (median, low, high) or None
        One run's share and Wilson interval, or the median of several and its sign test's
        interval (results.points.median_interval); None when no run was sampled.
    """
    shares = [p for p in _profiles(x) if "refused" not in p]
    if not shares:
        return None
    if len(shares) == 1:
        low, high = shares[0]["clearing_interval"]
        return shares[0]["clearing_share"], low, high
    values = [p["clearing_share"] for p in shares]
    low, high, _ = median_interval(values)
    return statistics.median(values), low, high


def main_routine(x: Profiled) -> dict[str, Any] | None:
    """The clearing routine seen most, over every sampled run, or None."""
    weight: Counter[str] = Counter()
    rows: dict[str, dict[str, Any]] = {}
    for p in _profiles(x):
        for r in p.get("clearing_routines", ()):
            weight[r["symbol"]] += r["share"]
            rows[r["symbol"]] = r
    return rows[weight.most_common(1)[0][0]] if weight else None


def routine_check(x: Profiled) -> tuple[bool | None, str]:
    """The routine the kernel was seen clearing with, against the one assumed for this CPU.

    Parameters
    ----------
    x : Result, ResultSet, list of Result, or a details["profile"] dict
        faults(profile=True)'s runs; the routine with the most samples over them counts.

    Returns
    -------
    (agrees, sentence)
        True when the routine seen is clear_pages_kernel()'s, False when it is another, None
        where nothing says (nothing sampled, or a symbol that does not name its instruction);
        and one line saying it.
    """
    assumed = clear_pages_kernel()
    profiles = _profiles(x)
    refused = next((p["refused"] for p in profiles if "refused" in p), None)
    seen = main_routine(x)
    if seen is None:
        why = f"sampling was refused: {refused}" if refused else "no clearing routine was sampled"
        return None, f"the kernel's clearing routine was not observed ({why}); assumed {assumed}"
    routine = clearing_routines().get(seen["symbol"])
    words = routine and routine.registry  # the registry's description of the same kernel
    kernel = next((k.name for k in kernels("clear") if words and words in k.description), None)
    named = f"{seen['symbol']} ({seen['instruction']})"
    if kernel is None:
        return None, (
            f"the kernel clears in {named}, whose symbol does not say which instruction it "
            f"runs: {assumed} is assumed"
        )
    if kernel == assumed:
        return True, f"the kernel clears with {named}, as assumed for this CPU ({assumed})"
    return False, (
        f"the kernel clears with {named}, not {assumed} as assumed for this CPU: the running "
        f"kernel chose another clear_page() than its CPU flags suggest (a guest kernel whose "
        f"hypervisor hides a flag, as arch/x86's page_64.h warns can happen); replays of the "
        f"kernel's clearing should use {kernel}"
    )


def lines(x: Profiled, top: int = 3) -> list[str]:
    """The CLI's short block of the profiles, or one line saying why there is none."""
    profiles = _profiles(x)
    kept = [p for p in profiles if "refused" not in p]
    if not kept:
        why = profiles[0]["refused"] if profiles else "no run was sampled"
        return [f"# inside the fault: not sampled: {why}; the run went on without a profile"]
    median, low, high = clearing_share(x)  # type: ignore[misc]
    routines = (
        ", ".join(f"{r['symbol']}, {r['instruction']}" for r in kept[0]["clearing_routines"])
        or "no clearing routine seen"
    )
    across = f"median of {len(kept)} runs, " if len(kept) > 1 else ""
    out = [
        f"# inside the fault: {median:.0%} clearing ({routines}); "
        f"{across}95% interval {low:.0%}-{high:.0%}"
    ]
    groups: Counter[str] = Counter()
    symbols: Counter[str] = Counter()
    for p in kept:  # averaged over the runs
        groups.update({g: v / len(kept) for g, v in p["groups"].items()})
        symbols.update({s["symbol"]: s["share"] / len(kept) for s in p["symbols"]})
    for group, share in groups.most_common():
        if group == CLEARING_GROUP or share < 0.005:
            continue
        syms = [(s, v) for s, v in symbols.most_common() if group_of(s) == group][:top]
        names = ", ".join(f"{s} {v:.0%}" for s, v in syms)
        out.append(f"#   {group}: {share:.0%} ({names})")
    samples = sum(p["samples"] for p in kept)
    lost = sum(p["lost"] for p in kept)
    out.append(f"# samples: {samples} ({kept[0]['event']}, {lost} lost); {routine_check(x)[1]}")
    return out
