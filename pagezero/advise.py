"""pagezero advise: what the seed authors worked out by hand, for this machine.

One compact sweep (every available clear kernel x a ladder of extents,
clearing one region in batches of each extent, rounds alternating) answers:

- which kernel clears fastest for which extent range;
- the knee: the extent from which temporal clears (clear_pages()'s kernel)
  run markedly faster because the CPU stops allocating cache lines for
  them, set against the LLC size read from sysfs;
- for each latency budget, the batch that clears fastest while its
  worst-case batch latency stays inside the budget.

The advice is a value (Advice); to_json() gives the documented shape.
"""
import math
import statistics
import time
from dataclasses import dataclass

from .interrupt import Interrupted, as_interrupted
from .kernels import kernels
from .policy import default_kernel, plan_batch, run_batch
from .stats import KNEE_CLEAR_STEP, KNEE_MIN_EXTENT, best_kernels, find_knee
from .sysinfo import llc_bytes
from .region import region
from .units import format_gbps, format_size

__all__ = ["Advice", "advise", "find_knee", "best_kernels", "batch_for_budget",
           "DEFAULT_BUDGETS_MS", "SWEEPS"]

DEFAULT_BUDGETS_MS = (1.0, 3.0)

# The sweeps. The region must be larger than the LLC several times over, and
# than the largest extent, so every extent is cleared from cold memory.
# Each round runs every (kernel, extent) cell once, as `passes` timed passes
# after an untimed one; rounds alternate the cells.
SWEEPS = {
    "default": {"region": 256 << 20, "rounds": 3, "passes": 3,
                "extents": (4 << 10, 64 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20,
                            32 << 20, 64 << 20, 128 << 20)},
    "quick": {"region": 64 << 20, "rounds": 1, "passes": 2,
              "extents": (64 << 10, 1 << 20, 8 << 20, 32 << 20)},
}

def batch_for_budget(cells, budget_ms):
    """The (kernel, extent) cell clearing fastest with worst_ms <= budget_ms, as
    {budget_ms, batch_bytes, kernel, bytes_per_sec, worst_ms}, and whether one
    fits; when none does, the cell with the smallest worst_ms.
    cells: {(kernel, extent): {"bytes_per_sec": ..., "worst_ms": ...}}."""
    fitting = [(c["bytes_per_sec"], -e, k, e) for (k, e), c in cells.items()
               if c["worst_ms"] <= budget_ms]
    if fitting:
        _, _, k, e = max(fitting)
        fits = True
    else:
        k, e = min(cells, key=lambda ke: (cells[ke]["worst_ms"], -cells[ke]["bytes_per_sec"]))
        fits = False
    c = cells[(k, e)]
    return {"budget_ms": float(budget_ms), "batch_bytes": e, "kernel": k,
            "bytes_per_sec": float(c["bytes_per_sec"]), "worst_ms": float(c["worst_ms"])}, fits


@dataclass(frozen=True)
class Advice:
    knee_bytes: int
    llc_bytes: int
    best_kernel: tuple          # of dicts, the JSON rows
    batch: tuple                # of dicts, the JSON rows
    knee_kernel: str
    knee_step: float            # upper level / lower level around the knee
    batch_fits: tuple           # per batch row: whether anything met the budget
    extents: tuple
    region_bytes: int
    rounds: int
    passes: int
    seconds: float
    cells: dict                 # {(kernel, extent): {"bytes_per_sec", "worst_ms"}}
    interrupted: object = None  # None, or the signal that cut the sweep short ("SIGINT")

    def to_json(self):
        """Exactly the documented shape, and "interrupted" (the signal's name)
        when a signal cut the sweep short."""
        doc = {
            "knee_bytes": int(self.knee_bytes),
            "llc_bytes": int(self.llc_bytes),
            "best_kernel": [dict(r) for r in self.best_kernel],
            "batch": [dict(r) for r in self.batch],
        }
        if self.interrupted:
            doc["interrupted"] = self.interrupted
        return doc

    def describe(self):
        """The advice in plain words, as lines."""
        gb = format_gbps
        n_kernels = len({k for k, _ in self.cells})
        lines = [f"From a sweep of {n_kernels} kernels x {len(self.extents)} extents "
                 f"({format_size(self.extents[0])} to {format_size(self.extents[-1])}), "
                 f"clearing a {format_size(self.region_bytes)} region in batches of each "
                 f"extent, {self.rounds} rounds of {self.passes} passes, {self.seconds:.1f} s "
                 "(GB/s = 10^9 bytes/s):", "", "Fastest kernel by extent:"]
        if self.interrupted:
            lines[1:1] = [f"Interrupted by {self.interrupted}: from the {len(self.cells)} "
                          "cells measured before it, partly with fewer rounds."]
        for r in self.best_kernel:
            span = format_size(r["min_bytes"]) if r["min_bytes"] == r["max_bytes"] else \
                f"{format_size(r['min_bytes'])} to {format_size(r['max_bytes'])}"
            lines.append(f"  {span:<16} {r['kernel']:<20} {gb(r['bytes_per_sec'])}")
        lines.append("")
        knee_rates = {e: c["bytes_per_sec"] for (k, e), c in self.cells.items()
                      if k == self.knee_kernel}
        below = [r for e, r in knee_rates.items() if KNEE_MIN_EXTENT <= e < self.knee_bytes]
        above = [r for e, r in knee_rates.items() if e >= self.knee_bytes]
        llc = (f"the LLC is {format_size(self.llc_bytes)} (sysfs), so the knee sits at "
               f"{self.knee_bytes / self.llc_bytes:.2g}x the LLC") if self.llc_bytes else \
            "the LLC size is unknown (sysfs gives none)"
        if self.knee_step >= KNEE_CLEAR_STEP:
            lines.append(
                f"Knee: {self.knee_kernel} (clear_pages() here) clears {self.knee_step:.1f}x "
                f"faster from {format_size(self.knee_bytes)} on "
                f"({gb(statistics.median(below))} below, {gb(statistics.median(above))} "
                f"from there): from that extent the CPU stops allocating cache lines for "
                f"its stores; {llc}.")
        else:
            lines.append(
                f"Knee: none clear for {self.knee_kernel} (clear_pages() here): its largest "
                f"step is only {self.knee_step:.2f}x, at {format_size(self.knee_bytes)}; "
                f"{llc}.")
        lines += ["", "Batch for clear_pages() between resched points, by worst-case batch "
                  "latency (the slowest batch position, each position's time the median "
                  "over passes, so a pass another task interrupted does not decide):"]
        for row, fits in zip(self.batch, self.batch_fits):
            what = (f"{format_size(row['batch_bytes'])} with {row['kernel']}, "
                    f"{gb(row['bytes_per_sec'])}, worst {row['worst_ms']:.2f} ms")
            if not fits:
                what = f"nothing measured fits; closest: {what}"
            lines.append(f"  {row['budget_ms']:g} ms: {what}")
        return lines


def _check_budgets(budgets_ms):
    out = []
    for b in budgets_ms:
        if isinstance(b, bool) or not isinstance(b, (int, float)) or not b > 0 or \
                not math.isfinite(b):
            raise ValueError(f"latency budget must be a positive number of ms, not {b!r}")
        out.append(float(b))
    if not out:
        raise ValueError("at least one latency budget is needed")
    return tuple(out)


def advise(quick=False, budgets_ms=DEFAULT_BUDGETS_MS, progress=None):
    """Sweep this machine and return an Advice. quick: a few-second sweep
    (smoke tests; its figures are not measurements). progress: a file to
    report rounds on (e.g. sys.stderr), or None. A signal (SIGINT, SIGTERM,
    SIGHUP, see pagezero.interrupt) raises Interrupted whose partial is the
    Advice from the cells measured before it (None when too few for a knee)."""
    budgets = _check_budgets(budgets_ms)
    sweep = SWEEPS["quick" if quick else "default"]
    extents, rounds, nbytes = sweep["extents"], sweep["rounds"], sweep["region"]
    names = [k.name for k in kernels("clear") if k.available]
    knee_kernel = default_kernel()
    combos = [(k, e) for k in names for e in extents]
    plans = {c: plan_batch(nbytes, c[1], c[0], loops=sweep["passes"]) for c in combos}
    rates = {c: [] for c in combos}
    worst = {c: [] for c in combos}
    start = time.monotonic()
    c = None
    try:
        with region(nbytes, page="4KB", thp=False) as reg:
            for rnd in range(rounds):
                # Rotate the order each round: nothing always runs first, or
                # always right after the same neighbour.
                shift = (rnd * len(combos)) // rounds
                for c in combos[shift:] + combos[:shift]:
                    _add(rates, worst, c, run_batch(plans[c], reg))
                if progress:
                    print(f"pagezero advise: round {rnd + 1}/{rounds} done",
                          file=progress, flush=True)
    except KeyboardInterrupt as e:
        # Keep what was measured: the cells done, and the passes of the one cut short.
        stop = as_interrupted(e)
        if stop.partial is not None and c is not None:
            _add(rates, worst, c, stop.partial)
        try:
            partial = _analyse(rates, worst, budgets, knee_kernel, sweep, nbytes,
                               time.monotonic() - start, stop.signame)
        except ValueError:
            partial = None      # too little to analyse (no knee from one extent)
        raise Interrupted(stop.signum, partial=partial) from None
    return _analyse(rates, worst, budgets, knee_kernel, sweep, nbytes, time.monotonic() - start)


def _add(rates, worst, cell, r):
    rates[cell].extend(r.rates)
    worst[cell].append(r.typical_worst_ms)


def _analyse(rates, worst, budgets, knee_kernel, sweep, nbytes, seconds, interrupted=None):
    """The Advice from the cells measured (all, or those before a signal)."""
    # Rates: the median of every pass. Worst: per round the slowest batch
    # position (each position's median over that round's passes), then the
    # median over rounds.
    cells = {c: {"bytes_per_sec": statistics.median(rates[c]),
                 "worst_ms": statistics.median(worst[c])} for c in rates if rates[c]}
    if knee_kernel not in {k for k, _ in cells}:
        raise ValueError(f"nothing measured with {knee_kernel}")
    by_kernel = {}
    for (k, e), cell in cells.items():
        by_kernel.setdefault(k, {})[e] = cell["bytes_per_sec"]
    extents = sorted({e for _, e in cells})
    knee, step = find_knee(by_kernel[knee_kernel].items())
    rows = [batch_for_budget(cells, b) for b in budgets]
    return Advice(
        knee_bytes=knee, llc_bytes=llc_bytes() or 0,
        best_kernel=tuple(best_kernels(by_kernel, extents)),
        batch=tuple(r for r, _ in rows), knee_kernel=knee_kernel, knee_step=step,
        batch_fits=tuple(f for _, f in rows), extents=tuple(extents), region_bytes=nbytes,
        rounds=sweep["rounds"], passes=sweep["passes"], seconds=seconds, cells=cells,
        interrupted=interrupted,
    )
