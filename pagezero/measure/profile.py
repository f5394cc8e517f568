"""Inside the fault: a faults() run's samples named and grouped. See docs/measuring.rst."""

from __future__ import annotations

import errno
import math
import os
import re
import resource
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pagezero.files import read_int
from pagezero.measure.routines import REGISTRY_WORDS, Routine, clearing_routines, rep_stos
from pagezero.results.points import median_interval
from pagezero.results.resultset import Result, ResultSet
from pagezero.system import kallsyms, kcore
from pagezero.system.kallsyms import clear_era
from pagezero.system.kernels import clear_pages_kernel, kernels

_PARANOID = "/proc/sys/kernel/perf_event_paranoid"
_WILSON_LEVEL = 0.95  # of one run's interval


# The rest of the fault path, by what it is: the first group whose pattern matches the
# symbol (re.search), so the more specific come first.
GROUPS: dict[str, str] = {
    "memcg accounting": r"mem_cgroup|memcg|lruvec|obj_cgroup|charge|throttle_swaprate",
    "page tables and their locks": r"pte|pmd|pud|p4d|pgd|pgtable|page_table|_raw_spin|spin_lock"
    r"|queued_spin|tlb",
    "page allocation": r"alloc_pages|alloc_frozen_pages|alloc_folio|get_page_from_freelist|rmqueue"
    r"|prep_new|post_alloc_hook|free_pages|free_unref|hugetlb_folio|dequeue_hugetlb|alloc_hugetlb"
    r"|buddy|__rmqueue|zone_|pcp|alloc_anon_folio|folio_prealloc|kernel_init_pages",
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


def group_of(symbol: str, routines: Mapping[str, Routine] | None = None) -> str:
    """The group a sampled symbol belongs to (GROUP_NAMES); a function the clear is inlined
    into counts by its own work (summarize() moves its samples at a rep stos to clearing)."""
    if routines is None:
        routines = clearing_routines(era=clear_era()[0])
    if symbol in routines and not routines[symbol].inlined:
        return CLEARING_GROUP
    if symbol == USER_GROUP:
        return USER_GROUP
    return next((g for g, pattern in _GROUP_RES if pattern.search(symbol)), OTHER_GROUP)


def refusal() -> str | None:
    """Why kernel addresses cannot be named here (kptr_restrict, no /proc/kallsyms), or None.

    kernel/kallsyms.c kallsyms_show_value(): kptr_restrict 2 hides them from everyone, 1 shows
    them to CAP_SYSLOG (root) only, 0 also to others where perf_event_paranoid is at most 1.
    """
    try:
        if kallsyms.table()[0]:
            return None
    except OSError as e:
        return (
            f"/proc/kallsyms cannot be read ({e.strerror}): mount /proc, or run outside a container"
        )
    kptr = read_int("/proc/sys/kernel/kptr_restrict")
    paranoid = read_int(_PARANOID)
    hidden = f"/proc/kallsyms hides kernel addresses (kptr_restrict {kptr}"
    if kptr is not None and kptr >= 2:
        return (
            f"{hidden} hides them even from root): sysctl kernel.kptr_restrict=1 and run as "
            "root, or sysctl kernel.kptr_restrict=0"
        )
    if os.geteuid() != 0 and (kptr == 1 or paranoid is None or paranoid > 1):
        return (
            f"{hidden}, perf_event_paranoid {paranoid}: a user without CAP_SYSLOG sees them "
            "only with kptr_restrict 0 and perf_event_paranoid at most 1): run as root, or "
            "sysctl kernel.kptr_restrict=0 kernel.perf_event_paranoid=1"
        )
    return (
        f"{hidden}, which would show them to this user: a security module or a container's "
        "/proc hides them): run outside it, or check sysctl kernel.kptr_restrict=0"
    )


def refused_why(err: int, stage: str = "open") -> str:
    """One line: why sampling was refused with errno `err` at `stage` ("open":
    perf_event_open(2), "mmap": the sample ring's mmap(2)), and what would allow it."""
    paranoid = read_int(_PARANOID)
    if stage == "mmap":
        if err != errno.EPERM:
            return f"mmap(2) of the sample ring failed: {os.strerror(err)}"
        mlock_kb = read_int("/proc/sys/kernel/perf_event_mlock_kb")
        limit = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
        memlock = "unlimited" if limit == resource.RLIM_INFINITY else f"{limit} bytes"
        return (
            f"mmap(2) of the sample ring was refused: the rings lock more than "
            f"perf_event_mlock_kb ({mlock_kb} KiB) and RLIMIT_MEMLOCK ({memlock}) allow a "
            "user without CAP_IPC_LOCK: sysctl kernel.perf_event_mlock_kb=<more KiB>, raise "
            "ulimit -l, or run as root"
        )
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


def wilson(k: float, n: int, confidence: float = _WILSON_LEVEL) -> tuple[float, float]:
    """The Wilson interval of a share k/n of n samples (scipy binomtest's, without continuity
    correction); k may be fractional: a period-weighted share times the number of samples."""
    from scipy import stats as sps

    z = float(sps.norm.ppf(0.5 + confidence / 2))
    p, zz = k / n, z * z / n
    centre, half = (p + zz / 2) / (1 + zz), z / (1 + zz) * math.sqrt(p * (1 - p) / n + zz / (4 * n))
    # The interval holds p; min/max keep a share of exactly 0 or 1 inside it despite rounding.
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def summarize(raw: Mapping[str, Any], kcore_path: str = kcore.KCORE) -> dict[str, Any]:
    """A run's details["profile"] from bench_fault's "profile" (its keys: docs/measuring.rst).

    Each sample weighs its period (cycles, or ns of CPU for cpu-clock: "kernel_periods",
    "user_period", "other_period"; 1 a sample where the raw has none), so every share is a
    period-weighted mean; the clearing share's Wilson interval is over the number of samples.
    Samples in a function the clear is inlined into (7.0) are clearing where the instruction
    read at their address from `kcore_path` is a rep stos; where it cannot be read, the profile
    is refused with the reason.
    """
    if "refused" in raw:
        return {"refused": refused_why(raw["refused"], raw.get("stage", "open"))}
    ips = raw["kernel_ips"]
    counts: Counter[int] = Counter(ips)
    weights: Counter[int] = Counter()
    for ip, period in zip(ips, raw.get("kernel_periods") or [1] * len(ips)):
        weights[ip] += period
    era, era_why = clear_era()
    routines = clearing_routines(era=era)
    symbol_of = {ip: kallsyms.symbol_of(ip) for ip in counts}  # each address looked up once
    inlined = [ip for ip, s in symbol_of.items() if s in routines and routines[s].inlined]
    try:
        code = kcore.instruction_bytes(inlined, path=kcore_path) if inlined else {}
    except OSError as e:
        return {
            "refused": f"the kernel's clear is inlined into its callers ({era_why}) "
            f"and {kcore_path} cannot be read ({e.strerror or e}) to tell its rep stos from "
            "their own work: run as root, on a kernel with CONFIG_PROC_KCORE"
        }
    rows: dict[tuple[str, str], list[float]] = {}  # (symbol, group): [samples, weight]
    stos: dict[str, set[str]] = {}  # the rep stos seen in each function it is inlined into
    for ip, n in counts.items():
        symbol, group = symbol_of[ip], group_of(symbol_of[ip], routines)
        found = ip in code and rep_stos(code[ip])
        if found:
            group = CLEARING_GROUP
            stos.setdefault(symbol, set()).add(found)
        row = rows.setdefault((symbol, group), [0, 0])
        row[0], row[1] = row[0] + n, row[1] + weights[ip]
    for name, key in ((USER_GROUP, "user"), (_ELSEWHERE, "other")):
        if raw[key]:
            rows[(name, group_of(name, routines))] = [raw[key], raw.get(f"{key}_period", raw[key])]
    samples = int(sum(n for n, _ in rows.values()))
    total = sum(w for _, w in rows.values())
    if not samples or not total:
        return {"refused": "no samples were taken (the timed loops were shorter than a sample)"}
    symbols: list[dict[str, Any]] = [
        {"symbol": s, "share": w / total, "group": g}
        for (s, g), (_, w) in sorted(rows.items(), key=lambda row: -row[1][1])
    ]
    groups = dict.fromkeys(GROUP_NAMES, 0.0)
    for s in symbols:
        groups[s["group"]] += s["share"]
    share = groups[CLEARING_GROUP]
    found = f"a {era} kernel's routines ({era_why})" if era else "every era's routines"
    found += "" if era else f": the kernel's clear_page() era is unknown ({era_why})"
    if inlined:
        found += (
            f"; {sum(bool(rep_stos(c)) for c in code.values())} of {len(inlined)} sampled "
            f"addresses in functions the clear is inlined into are rep stos, read from {kcore_path}"
        )
    return {
        "clearing_share": share,
        "clearing_interval": list(wilson(share * samples, samples)),
        "clearing_routines": [
            dict(
                symbol=s["symbol"],
                share=s["share"],
                instruction=", ".join(sorted(stos.get(s["symbol"], ())))
                or routines[s["symbol"]].instruction,
                source=routines[s["symbol"]].source,
            )
            for s in symbols
            if s["group"] == CLEARING_GROUP
        ],
        "clearing_found": f"clearing found by {found}",
        "samples": samples,
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


def clearing_estimate(x: Profiled) -> tuple[float, float, float, float] | None:
    """clearing_share()'s (median, low, high) and the interval's level: 0.95 for one run's
    Wilson interval; for several, the sign test's coverage (0.75 for min..max of 3 runs)."""
    shares = [p for p in _profiles(x) if "refused" not in p]
    if not shares:
        return None
    if len(shares) == 1:
        low, high = shares[0]["clearing_interval"]
        return shares[0]["clearing_share"], low, high, _WILSON_LEVEL
    values = [p["clearing_share"] for p in shares]
    low, high, level = median_interval(values)
    return statistics.median(values), low, high, level


def clearing_share(x: Profiled) -> tuple[float, float, float] | None:
    """The kernel's clearing share of the fault time, with its interval.

    Parameters
    ----------
    x : Result, ResultSet, list of Result, or a details["profile"] dict
        faults(profile=True)'s runs.

    Returns
    -------
    (median, low, high) or None
        One run's share and 95% Wilson interval, or the median of several and its sign test's
        interval (results.points.median_interval: its level is clearing_estimate()'s, 75% for
        min..max of 3 runs); None when no run was sampled.
    """
    estimate = clearing_estimate(x)
    return estimate and estimate[:3]


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
    words = REGISTRY_WORDS.get(seen["instruction"])  # the registry's words for the same kernel
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
    median, low, high, level = clearing_estimate(x)  # type: ignore[misc]
    routines = (
        ", ".join(f"{r['symbol']}, {r['instruction']}" for r in kept[0]["clearing_routines"])
        or "no clearing routine seen"
    )
    across = f"median of {len(kept)} runs, " if len(kept) > 1 else ""
    out = [
        f"# inside the fault: {median:.0%} clearing ({routines}); "
        f"{across}{level:.0%} interval {low:.0%}-{high:.0%}{_with_warmup(kept)}"
    ]
    groups: Counter[str] = Counter()
    symbols: Counter[tuple[str, str]] = Counter()
    for p in kept:  # averaged over the runs
        groups.update({g: v / len(kept) for g, v in p["groups"].items()})
        symbols.update({(s["symbol"], s["group"]): s["share"] / len(kept) for s in p["symbols"]})
    for group, share in groups.most_common():
        if group == CLEARING_GROUP or share < 0.005:
            continue
        syms = [(s, v) for (s, g), v in symbols.most_common() if g == group][:top]
        names = ", ".join(f"{s} {v:.0%}" for s, v in syms)
        out.append(f"#   {group}: {share:.0%} ({names})")
    samples = sum(p["samples"] for p in kept)
    lost = sum(p["lost"] for p in kept)
    out.append(f"# samples: {samples} ({kept[0]['event']}, {lost} lost); {routine_check(x)[1]}")
    if "clearing_found" in kept[0]:
        out.append(f"# {kept[0]['clearing_found']}")
    return out


def _with_warmup(kept: Sequence[Mapping[str, Any]]) -> str:
    """The share over every loop, warm-up included, where fault.py dropped some ("all_loops")."""
    shares = [p["all_loops"]["clearing_share"] for p in kept if "all_loops" in p]
    return f"; {statistics.median(shares):.0%} with the warm-up loops" if shares else ""
