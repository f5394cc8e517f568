"""pagezero.predict(): faults() and folio() replays in fresh processes, fitted and projected."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pagezero._core import PagezeroError
from pagezero.interrupt import Interrupted, as_interrupted
from pagezero.measure.fault import on_cpu_rate, page_report, plan
from pagezero.measure.mem import warming_runs
from pagezero.results.result import Result
from pagezero.runs.processes import across_processes, check_runs, faults
from pagezero.studies.predict.model import SAMPLED, fit, inside, observed, project
from pagezero.studies.predict.prediction import Prediction
from pagezero.studies.predict.replays import (
    Replay,
    every_policy,
    nontemporal_kernels,
    nontemporal_policies,
    replay_for,
    running_kernel,
    walk_key,
)
from pagezero.system import hugepages
from pagezero.system.machine import llc_bytes, machine
from pagezero.units import format_size, parse_size

PAGES = ("2MB", "1GB")
FAULT_SIZE = 1 << 30  # 512 faults of 2MB, or one of 1GB, per loop
FAULT_LOOPS = 5
# A 2MB clear lasts about 150 us, a 1GB one about 70 ms: a steady median, not minutes.
REPLAY_LOOPS = {"2MB": 20, "1GB": 3}
# 2MB faults on THP where the pool lacks pages: the same folio_zero_user() (docs/predict.rst).
THP_PAGES = (
    "2MB THP (no free 2MB hugetlb pages; a THP fault clears with the same "
    "folio_zero_user(); --reserve for hugetlb)"
)


def _fault_pages(page: str, needed: int, reserve: bool, info: dict[str, Any]) -> str:
    """What the faults will be on: hugetlb, else THP for 2MB; MappingError naming the fix."""
    if reserve or hugepages.pool(page).available >= needed:
        return f"{page} hugetlb"
    if page == "2MB" and info["thp"].get("enabled") in ("always", "madvise"):
        return THP_PAGES
    hugepages.check_available(page, needed, can_reserve=True)  # raises, naming --reserve
    return f"{page} hugetlb"


# The one estimator of a run's fault time: runs without sampling (it costs time inside the
# fault), as a CPU-time mean like the share's, which comes from separate runs with sampling.
FAULT_ESTIMATOR = (
    "mean on-CPU time per fault: the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over a run's "
    "kept loops / the faults in them, in runs without sampling; the median of the runs"
)


def _seconds_per_fault(r: Result, folio: int) -> float:
    """A run's mean on-CPU seconds per fault over its kept loops (FAULT_ESTIMATOR)."""
    rate = on_cpu_rate(r)
    if not rate:
        raise PagezeroError(f"the fault run measured no {format_size(folio)} fault")
    return folio / rate


def minimum_fault_size(page: str, info: Mapping[str, Any]) -> int | None:
    """Twice the largest LLC sysfs claims, in whole `page` folios: below it the faults clear
    folios still in the cache, the replays cold ones; None where no cache is known."""
    llc = llc_bytes(info)
    folio = parse_size(page)
    return -(-2 * llc // folio) * folio if llc else None


def _check_footprint(nbytes: int, page: str, info: Mapping[str, Any]) -> None:
    """ValueError where `nbytes` is under minimum_fault_size(), naming the least."""
    least, llc = minimum_fault_size(page, info), llc_bytes(info) or 0
    if least and nbytes < least:
        raise ValueError(
            f"size {format_size(nbytes)} is under twice the LLC ({format_size(llc)}, sysfs): "
            f"the faults would clear cached folios, the replays cold ones; use at least "
            f"{format_size(least)}"
        )


def _replay_pages(info: Mapping[str, Any]) -> tuple[str, str]:
    """folio()'s backing for the replays and why: 4KB where the kernel's linear map is 4KB."""
    linear = info.get("linear_map") or {}
    source = linear.get("source") or "not read"
    if linear.get("pages") == "4KB":
        return "4KB", f"4KB pages, as the kernel's linear map it clears through ({source})"
    if linear.get("pages") == "huge":
        return "auto", f"huge pages, as the kernel's linear map it clears through ({source})"
    return "auto", f"huge pages (the kernel's linear map not known: {source})"


def _warm(args: dict[str, Any], thp: bool) -> None:
    """One pass over the pool first (a VM's first touch faults on the host), checking THP's."""
    warm = list(faults(**{**args, "loops": 1}))
    if thp and warm and page_report(warm[0])["fallback"]:
        raise PagezeroError(
            f"THP did not back the demand faults with 2MB pages ({page_report(warm[0])['text']}); "
            f"reserve 2MB hugepages: pagezero predict --reserve (root), or "
            f"echo N > {hugepages.pool('2MB').path}"
        )


def _kept_runs(p: Prediction, measured: list[Result], runs: int) -> list[Result]:
    """The runs after those still warming up (mem.warming_runs), counting the lost ones."""
    # A worker process that died (its reason printed by the workers) is a run lost.
    p.lost_runs += runs - len(measured)
    rates = [r.bytes_per_sec or 0.0 for r in measured]
    return measured[warming_runs(rates) if all(rates) else 0 :]


def _measure_faults(p: Prediction, args: dict[str, Any], runs: int) -> list[float]:
    """The kept unsampled runs' seconds per fault; the sampled runs' share in p.inside (or
    why not: p.sampling)."""
    measured = list(faults(**args, runs=runs))
    p.lost_runs = runs - len(measured)
    folio = parse_size(p.page)
    p.fault_estimator = FAULT_ESTIMATOR
    p.run_rates = [folio / _seconds_per_fault(r, folio) for r in measured]
    p.discarded_runs = warming_runs(p.run_rates)
    fault_s = [folio / rate for rate in p.run_rates[p.discarded_runs :]]
    p.fault_bytes_per_sec = folio / statistics.median(fault_s)
    kept = measured[p.discarded_runs :]
    seconds = sum(sum(r.seconds or ()) for r in kept)
    p.loop_bytes_per_sec = sum(r.total_bytes for r in kept) / seconds
    seen = inside(_kept_runs(p, list(faults(**args, **SAMPLED, runs=runs)), runs))
    p.inside, p.sampling = (None, seen) if isinstance(seen, str) else (seen, None)
    return fault_s


def _replay_times(
    walks: Sequence[Replay], folio: str, loops: int, runs: int, pages: str
) -> tuple[dict[tuple[str, int, str], list[float]], str]:
    """Each walk's seconds per clear on `pages`, one per run (run i of every walk in one
    process)."""
    points = [
        dict(size=folio, fault_index=0, loops=loops, backing=pages, cache="cold", **w.folio_args())
        for w in walks
    ]
    rs = across_processes("folio", points, runs)
    times: dict[tuple[str, int, str], list[float]] = {}
    backing = "?"
    nbytes = parse_size(folio)
    for r in rs.results:
        # The bulk kernel: the non-temporal one of the 2012 walk, else the only one.
        bulk = r.params.get("nt_kernel") or r.function
        key = walk_key(r.params["strategy"], r.params["batch_bytes"], bulk, nbytes)
        times.setdefault(key, []).append(statistics.median(r.seconds or (0.0,)))
        backing = str(r.params.get("backing", backing))
    return times, backing


def predict(
    page: str = "2MB",
    runs: int = 3,
    reserve: bool = False,
    size: int | str = FAULT_SIZE,
    loops: int = FAULT_LOOPS,
    replay_loops: int | None = None,
) -> Prediction:
    """Predict what another clearing policy would make of this machine's faults (docs/predict.rst).

    Parameters
    ----------
    page : {"2MB", "1GB"}
        The huge page size: 2MB from the hugetlb pool, else THP; 1GB from its pool.
    runs : int
        Fresh processes for the faults and for the replays.
    reserve : bool
        Grow the hugepage pool by what the faults lack (root), given back afterwards.
    size, loops : int or str, int
        Bytes faulted per loop (a whole number of pages, at least twice the LLC: the faults
        clear cold folios, as the replays do); fault loops per run.
    replay_loops : int or None
        Clears per replay run (default: 20 for 2MB, 3 for 1GB).

    Returns
    -------
    Prediction
        The observed model's projections, else the subtraction's (none where it does not fit).

    Raises
    ------
    ValueError
        For a bad argument, or a size under twice the LLC (naming the least).
    MappingError
        When the pool lacks the hugepages (naming the fix).
    PagezeroError
        When reserving needs root, THP did not give 2MB pages, or init_on_alloc leaves a THP
        fault no one policy's clear (before measuring; naming --reserve).
    Interrupted
        On a stop signal; its partial is the Prediction so far.
    """
    if page not in PAGES:
        raise ValueError(f"page must be one of {', '.join(PAGES)}, not {page!r}")
    check_runs(runs)
    fault_plan = plan(size, page, loops)  # checks size and loops before anything runs
    folio = parse_size(page)
    replay_loops = REPLAY_LOOPS[page] if replay_loops is None else replay_loops
    plan(folio, page, replay_loops)  # the same loop bounds for the replays
    info = machine()
    _check_footprint(fault_plan.nbytes, page, info)
    kernel = running_kernel(info)
    needed = fault_plan.nbytes // folio
    pages = _fault_pages(page, needed, reserve, info)
    thp = pages == THP_PAGES
    running = replay_for(kernel, folio, thp)  # refuses a THP fault that is no one clear, first
    pages_args = dict(page="4KB", thp=True) if thp else dict(page=page)
    args = dict(size=fault_plan.nbytes, function="demand", loops=loops, **pages_args)
    warm_up = (
        f"warmed the pool first: one pass of {needed} demand fault{'s' * (needed != 1)} over "
        f"{format_size(fault_plan.nbytes)}, not counted (on a VM a first touch also "
        f"faults on the host)"
    )
    k, nbytes = kernel, fault_plan.nbytes
    p = Prediction(page, k.release, k.preempt, k.preempt_note, pages, nbytes, loops, warm_up)
    p.policy_era = k.era_words
    replay_backing, p.replay_pages = _replay_pages(info)
    try:
        with hugepages.reserve(page, needed) if reserve else contextlib.nullcontext():
            _warm(args, thp)
            fault_s = _measure_faults(p, args, runs)
            _replay_and_fit(p, running, fault_s, replay_loops, runs, replay_backing)
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        p.interrupted = stop.signame
        raise Interrupted(stop.signum, partial=p) from None
    return p


def _replay_and_fit(
    p: Prediction, running: Replay, fault_s: list[float], loops: int, runs: int, pages: str
) -> None:
    folio = parse_size(p.page)
    policies, candidates = every_policy(folio), nontemporal_policies(folio)
    everything = [running, *policies, *candidates]
    walks = list({w.same_walk(folio): w for w in everything}.values())
    times, p.replay_backing = _replay_times(walks, p.page, loops, runs, pages)
    p.replay, p.nontemporal_kernels = running, nontemporal_kernels()
    clear_s = times[running.same_walk(folio)]
    p.replay_bytes_per_sec = folio / statistics.median(clear_s)
    f = fit(folio, fault_s, clear_s)
    p.explained, p.remainder_us, p.verdict = f.explained, f.remainder_s * 1e6, f.verdict()
    p.remainder_interval_us = (f.remainder_low * 1e6, f.remainder_high * 1e6)
    seen = p.inside
    p.observed = o = observed(folio, fault_s, seen.share, seen.low, seen.high) if seen else None

    def each(replay: Replay) -> None:
        walk = replay.same_walk(folio)
        if f.fits:
            p.cross_check.append(project(f, replay, times[walk]))
        if o:
            # Ratios run by run: a policy's replay against the running one's, in one process.
            ratios = [t / mine for t, mine in zip(times[walk], clear_s)]
            p.projections.append(o.project(replay, ratios, times[walk]))

    for policy in policies:
        # The running walk is today's clear (7.0's other models too, where they clear alike).
        if policy.same_walk(folio) != running.same_walk(folio):
            each(policy)
        same = [c for c in candidates if (c.policy, c.preempt) == (policy.policy, policy.preempt)]
        if same:
            # The fastest non-temporal kernel for this walk: the least median clear.
            each(min(same, key=lambda c: statistics.median(times[c.same_walk(folio)])))
    if not o:  # today's model answers, and there is nothing to cross-check
        p.projections, p.cross_check = p.cross_check, []
