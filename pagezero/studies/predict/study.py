"""pagezero.predict(): faults() and folio() replays in fresh processes, fitted and projected."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Sequence
from typing import Any

from pagezero._core import PagezeroError
from pagezero.interrupt import Interrupted, as_interrupted
from pagezero.measure.fault import page_report, plan
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
from pagezero.system.machine import machine
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


def _median_fault_rate(r: Result, folio: int) -> float:
    """A fault run's rate from the median of its kept loops' median faults (mem.warming_runs)."""
    latency = r.details["latency"]
    if latency["unit_bytes"] != folio or not all(latency["loop_p50_ns"] or (0,)):
        raise PagezeroError(
            f"the fault run timed {format_size(latency['unit_bytes'])} per latency sample, "
            f"not one {format_size(folio)} fault"
        )
    return folio / (statistics.median(latency["loop_p50_ns"]) * 1e-9)


def _warm(args: dict[str, Any], thp: bool) -> None:
    """One pass over the pool first (a VM's first touch faults on the host), checking THP's."""
    warm = list(faults(**{**args, "loops": 1}))
    if thp and warm and page_report(warm[0])["fallback"]:
        raise PagezeroError(
            f"THP did not back the demand faults with 2MB pages ({page_report(warm[0])['text']}); "
            f"reserve 2MB hugepages: pagezero predict --reserve (root), or "
            f"echo N > {hugepages.pool('2MB').path}"
        )


def _measure_faults(p: Prediction, args: dict[str, Any], runs: int) -> list[float]:
    """The kept fault runs' seconds per fault; sampling's in p.inside (or why not: p.sampling)."""
    measured = list(faults(**args, **SAMPLED, runs=runs))
    # A worker process that died (its reason printed by the workers) is a run lost.
    p.lost_runs = runs - len(measured)
    folio = parse_size(p.page)
    p.run_rates = [_median_fault_rate(r, folio) for r in measured]
    p.discarded_runs = warming_runs(p.run_rates)
    fault_s = [folio / rate for rate in p.run_rates[p.discarded_runs :]]
    p.fault_bytes_per_sec = folio / statistics.median(fault_s)
    kept = measured[p.discarded_runs :]
    seen = inside(kept)
    p.inside, p.sampling = (None, seen) if isinstance(seen, str) else (seen, None)
    seconds = sum(sum(r.seconds or ()) for r in kept)
    p.loop_bytes_per_sec = sum(r.total_bytes for r in kept) / seconds
    return fault_s


def _replay_times(
    walks: Sequence[Replay], folio: str, loops: int, runs: int
) -> tuple[dict[tuple[str, int, str], list[float]], str]:
    """Each walk's seconds per clear, one per run (run i of every walk in one process)."""
    points = [
        dict(size=folio, fault_index=0, loops=loops, backing="auto", cache="cold", **w.folio_args())
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
        Bytes faulted per loop (a whole number of pages); fault loops per run.
    replay_loops : int or None
        Clears per replay run (default: 20 for 2MB, 3 for 1GB).

    Returns
    -------
    Prediction
        The observed model's projections, else the subtraction's (none where it does not fit).

    Raises
    ------
    ValueError
        For a bad argument.
    MappingError
        When the pool lacks the hugepages (naming the fix).
    PagezeroError
        When reserving needs root, or THP did not give 2MB pages.
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
    kernel = running_kernel(info)
    needed = fault_plan.nbytes // folio
    pages = _fault_pages(page, needed, reserve, info)
    thp = pages == THP_PAGES
    pages_args = dict(page="4KB", thp=True) if thp else dict(page=page)
    args = dict(size=fault_plan.nbytes, function="demand", loops=loops, latency=True, **pages_args)
    warm_up = (
        f"warmed the pool first: one pass of {needed} demand fault{'s' * (needed != 1)} over "
        f"{format_size(fault_plan.nbytes)}, not counted (on a VM a first touch also "
        f"faults on the host)"
    )
    k, nbytes = kernel, fault_plan.nbytes
    p = Prediction(page, k.release, k.preempt, k.preempt_note, pages, nbytes, loops, warm_up)
    try:
        with hugepages.reserve(page, needed) if reserve else contextlib.nullcontext():
            _warm(args, thp)
            fault_s = _measure_faults(p, args, runs)
            _replay_and_fit(p, replay_for(kernel, folio, thp), fault_s, replay_loops, runs)
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        p.interrupted = stop.signame
        raise Interrupted(stop.signum, partial=p) from None
    return p


def _replay_and_fit(
    p: Prediction, running: Replay, fault_s: list[float], loops: int, runs: int
) -> None:
    folio = parse_size(p.page)
    policies, candidates = every_policy(folio), nontemporal_policies(folio)
    everything = [running, *policies, *candidates]
    walks = list({w.same_walk(folio): w for w in everything}.values())
    times, p.replay_backing = _replay_times(walks, p.page, loops, runs)
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
