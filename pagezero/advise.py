"""pagezero advise: what the seed authors worked out by hand, for this machine.

One compact sweep (every available clear kernel x a ladder of extents,
clearing one region in batches of each extent) answers:

- which kernel clears fastest for which extent range;
- the knee: the extent from which temporal clears (clear_pages()'s kernel)
  run markedly faster because the CPU stops allocating cache lines for
  them, set against the LLC size read from sysfs;
- for each latency budget, the batch that clears fastest while its
  typical worst batch latency stays inside the budget.

The run is the unit: the sweep is made over several fresh processes (one
repetition of the whole grid each, in its own shuffled order), as a single
process can land on a lucky or unlucky physical placement of its memory.
Candidates within the noise between those runs are tied, and the tie rules
of pagezero.advise_ties choose among them, so that measuring again gives
the same advice rather than another of the near-equals.

The advice is a value (Advice); to_json() gives the documented shape.
"""

import math
import signal
import statistics
import time
from dataclasses import dataclass

from .advise_ties import (
    TIE_FLOOR_PCT,
    batch_for_budget,
    best_kernels,
    knee,
    run_spreads,
    sweep_noise,
)
from .interrupt import Interrupted
from .kernels import kernels
from .mappings import kernel_backing
from .points import point_summary
from .policy import default_kernel, plan_batch, run_batch
from .region import region
from .stats import KNEE_CLEAR_STEP, KNEE_MIN_EXTENT, find_knee
from .sweeps import register, sweep
from .sysinfo import llc_bytes
from .units import format_gbps, format_size

__all__ = [
    "Advice",
    "advise",
    "find_knee",
    "best_kernels",
    "batch_for_budget",
    "DEFAULT_BUDGETS_MS",
    "SWEEPS",
    "cells_from_results",
]

DEFAULT_BUDGETS_MS = (1.0, 3.0)

# The sweeps. The region must be larger than the LLC several times over, and
# than the largest extent, so every extent is cleared from cold memory. Each
# run is a fresh process (the quick sweep's one run is this process) that
# visits every (kernel, extent) cell once in its own shuffled order, on the
# one region it maps (_shared_region), as `passes` timed passes after the
# untimed one pagezero.batch() always makes. Five runs of eight passes: with
# three of three, the largest batches (two per pass) spread 10-20% between
# runs here and the advice changed with them; this takes about a minute.
SWEEPS = {
    "default": {
        "region": 256 << 20,
        "runs": 5,
        "passes": 8,
        "extents": (
            4 << 10,
            64 << 10,
            1 << 20,
            4 << 20,
            8 << 20,
            16 << 20,
            32 << 20,
            64 << 20,
            128 << 20,
        ),
    },
    "quick": {
        "region": 64 << 20,
        "runs": 1,
        "passes": 2,
        "extents": (64 << 10, 1 << 20, 8 << 20, 32 << 20),
    },
}

# How results' params["backing"] reads in words (pagezero.mappings' labels).
_BACKING_WORDS = {"hugetlb": "2MB hugetlb", "thp": "2MB THP", "4KB": "4KB"}


@dataclass(frozen=True)
class Advice:
    knee_bytes: int
    llc_bytes: int
    best_kernel: tuple  # of dicts, the JSON rows (with "tied")
    batch: tuple  # of dicts, the JSON rows (with "tied")
    knee_kernel: str
    knee_step: float  # upper level / lower level around the knee
    batch_fits: tuple  # per batch row: whether anything met the budget
    extents: tuple
    region_bytes: int
    runs: int  # runs (processes) that measured the cells
    passes: int
    seconds: float
    cells: dict  # {(kernel, extent): cell}, see cells_from_results()
    knee_tied: tuple = ()  # other extents whose knee fit is within noise
    backing: str = "4KB"  # the pages the region was on, in words
    interrupted: object = None  # None, or the signal that cut the sweep short ("SIGINT")

    def to_json(self):
        """The documented shape: today's keys, and "tied", "typical_worst_ms",
        "max_worst_ms", "checked_against" per row, "knee_tied", "runs" and
        "backing"; "interrupted" (the signal's name) when a signal cut the
        sweep short."""
        doc = {
            "knee_bytes": int(self.knee_bytes),
            "llc_bytes": int(self.llc_bytes),
            "best_kernel": [dict(r) for r in self.best_kernel],
            "batch": [dict(r) for r in self.batch],
            "knee_tied": [int(e) for e in self.knee_tied],
            "runs": int(self.runs),
            "backing": self.backing,
        }
        if self.interrupted:
            doc["interrupted"] = self.interrupted
        return doc

    def _noise_text(self):
        noise = next((c.get("noise_pct") for c in self.cells.values()), None)
        return "unknown with one run" if noise is None else f"{noise:.1f}%"

    def describe(self):
        """The advice in plain words, as lines."""
        gb = format_gbps
        n_kernels = len({k for k, _ in self.cells})
        runs = (
            f"{self.runs} runs (fresh processes) of {self.passes} passes each"
            if self.runs > 1
            else f"1 run of {self.passes} passes (--quick: the noise between runs is "
            "unknown, ties judged by the passes' spread)"
        )
        lines = [
            f"From a sweep of {n_kernels} kernels x {len(self.extents)} extents "
            f"({format_size(self.extents[0])} to {format_size(self.extents[-1])}), "
            f"clearing a {format_size(self.region_bytes)} region on {self.backing} "
            f"pages in batches of each extent, {runs}, {self.seconds:.1f} s "
            "(GB/s = 10^9 bytes/s; medians over runs):",
            "Candidates within the noise between runs are tied (the larger of twice "
            f"the sweep's noise, {self._noise_text()}, and {TIE_FLOOR_PCT:g}%); a batch fits "
            "a budget with that noise added; among tied kernels, clear_pages()'s "
            f"({self.knee_kernel}) if tied, else the first in the kernel table.",
            "",
            "Fastest kernel by extent:",
        ]
        if self.interrupted:
            lines[1:1] = [
                f"Interrupted by {self.interrupted}: from the {len(self.cells)} "
                "cells measured before it, partly with fewer runs."
            ]
        for r in self.best_kernel:
            span = (
                format_size(r["min_bytes"])
                if r["min_bytes"] == r["max_bytes"]
                else f"{format_size(r['min_bytes'])} to {format_size(r['max_bytes'])}"
            )
            tied = f"  (tied: {', '.join(r['tied'])})" if r.get("tied") else ""
            lines.append(f"  {span:<16} {r['kernel']:<20} {gb(r['bytes_per_sec'])}{tied}")
        lines.append("")
        lines.append(self._knee_line())
        lines += [
            "",
            "Batch for clear_pages() between resched points, by typical worst "
            "batch latency (the slowest batch position, each position's time the "
            "median over a run's passes, then the median over runs, so a pass another "
            "task interrupted does not decide; max: the slowest batch of all runs); "
            "among tied, the largest batch:",
        ]
        for row, fits in zip(self.batch, self.batch_fits):
            what = (
                f"{format_size(row['batch_bytes'])} with {row['kernel']}, "
                f"{gb(row['bytes_per_sec'])}, typical worst "
                f"{row['typical_worst_ms']:.2f} ms (max {row['max_worst_ms']:.2f} ms)"
            )
            if not fits:
                what = f"nothing measured fits; closest: {what}"
            lines.append(f"  {row['budget_ms']:g} ms: {what}")
            if row["tied"]:
                measured = {k for k, _ in self.cells}
                lines.append(f"      tied: {_tied_cells(row['tied'], measured)}")
        return lines

    def _knee_line(self):
        gb = format_gbps
        knee_rates = {
            e: c["bytes_per_sec"] for (k, e), c in self.cells.items() if k == self.knee_kernel
        }
        below = [r for e, r in knee_rates.items() if KNEE_MIN_EXTENT <= e < self.knee_bytes]
        above = [r for e, r in knee_rates.items() if e >= self.knee_bytes]
        llc = (
            (
                f"the LLC is {format_size(self.llc_bytes)} (sysfs), so the knee sits at "
                f"{self.knee_bytes / self.llc_bytes:.2g}x the LLC"
            )
            if self.llc_bytes
            else "the LLC size is unknown (sysfs gives none)"
        )
        tied = (
            (
                f"; tied within noise: {', '.join(format_size(e) for e in self.knee_tied)} "
                "(the smallest is taken)"
            )
            if self.knee_tied
            else ""
        )
        if self.knee_step >= KNEE_CLEAR_STEP:
            return (
                f"Knee: {self.knee_kernel} (clear_pages() here) clears "
                f"{self.knee_step:.1f}x faster from {format_size(self.knee_bytes)} on "
                f"({gb(statistics.median(below))} below, {gb(statistics.median(above))} "
                f"from there): from that extent the CPU stops allocating cache lines for "
                f"its stores; {llc}{tied}."
            )
        return (
            f"Knee: none clear for {self.knee_kernel} (clear_pages() here): its largest "
            f"step is only {self.knee_step:.2f}x, at {format_size(self.knee_bytes)}; "
            f"{llc}."
        )


def _tied_cells(tied, kernels_measured):
    """ "16MB x86-64-avx-nt, x86-64-movnti; 32MB every kernel" from a row's tied cells."""
    by_extent = {}
    for t in tied:
        by_extent.setdefault(t["batch_bytes"], []).append(t["kernel"])
    return "; ".join(
        f"{format_size(e)} {'every kernel' if set(ks) >= kernels_measured else ', '.join(ks)}"
        for e, ks in by_extent.items()
    )


def _check_budgets(budgets_ms):
    out = []
    for b in budgets_ms:
        if (
            isinstance(b, bool)
            or not isinstance(b, (int, float))
            or not b > 0
            or not math.isfinite(b)
        ):
            raise ValueError(f"latency budget must be a positive number of ms, not {b!r}")
        out.append(float(b))
    if not out:
        raise ValueError("at least one latency budget is needed")
    return tuple(out)


def _check_runs(runs, quick):
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be a positive int, not {runs!r}")
    if runs < 3 and not quick:
        # Fewer give no usable spread between runs, and ties then rest on the floor alone.
        raise ValueError(f"advise needs at least 3 runs (not {runs}); --quick may use fewer")
    return runs


# One region per process, shared by every cell that process measures. The
# kernels at one extent are then compared on the same physical pages: a run's
# placement of the region (3-5% at 256MB here) moves every cell of the run
# alike, and run_spreads' load factor takes it out. A fresh mapping per cell
# gave each cell a placement of its own, which no run-level factor removes,
# and ties as wide as that noise.
_REGIONS = {}


def _shared_region(nbytes):
    if nbytes not in _REGIONS:
        _REGIONS[nbytes] = region(nbytes, **kernel_backing(nbytes).region_args())
    return _REGIONS[nbytes]


def _release_regions():
    while _REGIONS:
        _REGIONS.popitem()[1].close()


def advise_cell(size, batch, kernel, loops):
    """One cell of the advice sweep: pagezero.batch()'s measurement on this
    process's shared region (its pages: pagezero.mappings.kernel_backing)."""
    return run_batch(plan_batch(size, batch, kernel, loops), _shared_region(size))


register("advise-cell", advise_cell, lambda **point: plan_batch(**point))


def advise(quick=False, budgets_ms=DEFAULT_BUDGETS_MS, progress=None, runs=None):
    """Sweep this machine and return an Advice.

    quick: a few-second sweep of one run in this process (smoke tests; its
    figures are not measurements, and its ties know no between-run noise).
    runs: the runs (fresh processes, one after the other) to measure over;
    default 3 (at least 3 unless quick), or 1 with quick. progress: a file to report on (e.g.
    sys.stderr; a progress bar follows there when it is a terminal), or None.
    A signal (SIGINT, SIGTERM, SIGHUP, see pagezero.interrupt) raises
    Interrupted whose partial is the Advice from the cells measured before it
    (None when too few for a knee)."""
    budgets = _check_budgets(budgets_ms)
    cfg = dict(SWEEPS["quick" if quick else "default"])
    cfg["runs"] = _check_runs(cfg["runs"] if runs is None else runs, quick)
    names = [k.name for k in kernels("clear") if k.available]
    grid = {
        "size": [cfg["region"]],
        "batch": list(cfg["extents"]),
        "kernel": names,
        "loops": [cfg["passes"]],
    }
    if progress:
        print(
            f"pagezero advise: {len(names)} kernels x {len(cfg['extents'])} extents, "
            f"{cfg['runs']} run(s)",
            file=progress,
            flush=True,
        )
    start = time.monotonic()
    # One repetition of the grid per process: the run is the unit. warmup=0:
    # each batch() makes an untimed pass through its kernel before timing.
    try:
        rs = sweep(
            "advise-cell",
            grid,
            repeat=cfg["runs"],
            warmup=0,
            processes=cfg["runs"],
            progress=None if progress else False,
        )  # None: a bar on a terminal
    finally:
        _release_regions()  # one run measures here (quick): its region goes now
    seconds = time.monotonic() - start
    if rs.interrupted:
        try:
            partial = _analyse(rs, budgets, cfg, seconds, rs.interrupted)
        except ValueError:
            partial = None  # too little to analyse (no knee from one extent)
        signum = getattr(signal, str(rs.interrupted), signal.SIGINT)  # its name, as sweeps keep it
        raise Interrupted(signum, partial=partial)
    return _analyse(rs, budgets, cfg, seconds)


def cells_from_results(results, runs):
    """{(kernel, extent): cell} from batch Results and their runs (the
    ResultSet's, runs[i]["process"] the run that measured result i). A cell:
    bytes_per_sec (median of the per-run medians, points.point_summary),
    spread_pct and spread_of: between runs, each run divided by its load
    factor (advise_ties.run_spreads), or the passes' spread when one run
    measured the cell; noise_pct, the sweep's noise (advise_ties.sweep_noise:
    what ties are judged by); runs; typical_worst_ms (per run the slowest batch
    position, median over its passes; then the median over runs) and
    worst_ms, its old name; max_worst_ms (the slowest batch of every pass of
    every run)."""
    by_cell = {}
    for r, run in zip(results, runs):
        cell = by_cell.setdefault((r.function, r.batch_bytes), {})
        per_run = cell.setdefault(run.get("process", 0), {"rates": [], "typical": [], "max": []})
        per_run["rates"].extend(r.values())
        per_run["typical"].append(r.typical_worst_ms)
        per_run["max"].append(r.worst_ms)
    between = run_spreads(
        {
            key: {run: statistics.median(p["rates"]) for run, p in per_run.items()}
            for key, per_run in by_cell.items()
        }
    )
    noise = sweep_noise(between.values())  # None with one run: each cell's loops decide
    cells = {}
    for key, per_run in by_cell.items():
        summary = point_summary([p["rates"] for p in per_run.values()], "bytes/sec")
        typical = statistics.median(statistics.median(p["typical"]) for p in per_run.values())
        cells[key] = {
            "bytes_per_sec": summary["median"],
            "spread_pct": summary["spread_pct"] if between[key] is None else between[key],
            "spread_of": summary["spread_of"],
            "runs": summary["runs"],
            "typical_worst_ms": typical,
            "worst_ms": typical,
            "max_worst_ms": max(max(p["max"]) for p in per_run.values()),
            "noise_pct": noise,
        }
    return cells


def _backing(results):
    """The pages the results' regions were on, in words ("4KB" where a result
    does not say: batch() used 4KB pages before it recorded its backing)."""
    used = []
    for r in results:
        b = r.params.get("backing") or "4KB"
        b = _BACKING_WORDS.get(b, b)
        if b not in used:
            used.append(b)
    return " and ".join(used) if used else "4KB"


def _analyse(rs, budgets, cfg, seconds, interrupted=None):
    """The Advice from the cells measured (all, or those before a signal)."""
    cells = cells_from_results(rs.results, rs.runs)
    knee_kernel = default_kernel()
    order = [k.name for k in kernels("clear")]
    if knee_kernel not in {k for k, _ in cells}:
        raise ValueError(f"nothing measured with {knee_kernel}")
    extents = sorted({e for _, e in cells})
    knee_bytes, step, knee_tied = knee({e: c for (k, e), c in cells.items() if k == knee_kernel})
    rows = [batch_for_budget(cells, b, order, knee_kernel) for b in budgets]
    return Advice(
        knee_bytes=knee_bytes,
        llc_bytes=llc_bytes() or 0,
        best_kernel=tuple(best_kernels(cells, extents, order, knee_kernel)),
        batch=tuple(r for r, _ in rows),
        knee_kernel=knee_kernel,
        knee_step=step,
        batch_fits=tuple(f for _, f in rows),
        extents=tuple(extents),
        region_bytes=cfg["region"],
        runs=len({run.get("process", 0) for run in rs.runs}),
        passes=cfg["passes"],
        seconds=seconds,
        cells=cells,
        knee_tied=tuple(knee_tied),
        backing=_backing(rs.results),
        interrupted=interrupted,
    )
