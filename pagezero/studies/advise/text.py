"""The advice of pagezero advise as a value (Advice): its JSON and its text."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pagezero.analysis.knee import KNEE_MIN_EXTENT, clear_knee, is_clear_step
from pagezero.studies.advise.ties import TIE_FLOOR_PCT
from pagezero.units import format_gbps, format_size


@dataclass(frozen=True)
class Advice:
    """What pagezero advise found for this machine (made by advise()).

    Attributes
    ----------
    knee_bytes : int
        The best one-step split of clear_pages()'s kernel's rate over the extents,
        in bytes: a knee only where knee_step is a clear step
        (pagezero.analysis.knee.is_clear_step); to_json() gives null otherwise.
    llc_bytes : int
        The LLC size in bytes from sysfs (0 when unknown).
    best_kernel : tuple of dict
        The fastest kernel by extent range, the JSON rows (with "tied").
    batch : tuple of dict
        Per latency budget, the batch chosen, the JSON rows (with "tied").
    knee_kernel : str
        The kernel whose knee is given (clear_pages()'s).
    knee_step : float
        Upper level / lower level around the knee.
    batch_fits : tuple of bool
        Per batch row, whether anything met the budget.
    extents : tuple of int
        The extents swept, in bytes.
    region_bytes : int
        The region cleared, in bytes.
    runs : int
        The runs (processes) that measured the cells.
    passes : int
        The timed passes per cell and run, over all its rounds.
    seconds : float
        The sweep's wall time, in seconds.
    cells : dict of (str, int) to dict
        {(kernel, extent): cell}, see cells_from_results().
    knee_tied : tuple of int
        Other extents (bytes) whose knee fit is within noise.
    backing : str
        The pages the region was on, in words.
    interrupted : str or None
        None, or the signal that cut the sweep short ("SIGINT").
    rounds : int
        The shuffled visits of every cell per run, that the passes were spread over.
    cache : dict or None
        The cache the run has (pagezero.analysis.cache.MeasuredCache.to_json()),
        beside sysfs's LLC; None where not known.
    """

    knee_bytes: int
    llc_bytes: int
    best_kernel: tuple[dict[str, Any], ...]
    batch: tuple[dict[str, Any], ...]
    knee_kernel: str
    knee_step: float
    batch_fits: tuple[bool, ...]
    extents: tuple[int, ...]
    region_bytes: int
    runs: int
    passes: int
    seconds: float
    cells: dict[tuple[str, int], dict[str, Any]]
    knee_tied: tuple[int, ...] = ()
    backing: str = "4KB"
    interrupted: str | None = None
    rounds: int = 1
    cache: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The advice as the documented JSON shape.

        Returns
        -------
        dict
            Today's keys, and "tied", "typical_worst_ms", "p90_worst_ms", "max_worst_ms",
            "checked_against" per row, "knee_tied", "runs" and "backing"; "knee_bytes"
            null where the step is not a clear one, with "knee_step" (the largest
            step), "knee_split_bytes" (where it is) and "knee_extents" (the extents
            tried); "cache" (the cache the run has, beside sysfs's LLC, or null);
            "interrupted" (the signal's name) when a signal cut the sweep short.
            Sizes in bytes, rates in bytes/sec, latencies in ms.
        """
        doc: dict[str, Any] = {
            "knee_bytes": clear_knee(self.knee_bytes, self.knee_step),
            "knee_step": float(self.knee_step),
            "knee_split_bytes": int(self.knee_bytes),
            "knee_extents": [int(e) for e in self.extents if e >= KNEE_MIN_EXTENT],
            "cache": self.cache,
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

    def _noise_text(self) -> str:
        noise = next((c.get("noise_pct") for c in self.cells.values()), None)
        return "unknown with one run" if noise is None else f"{noise:.1f}%"

    def describe(self) -> list[str]:
        """The advice in plain words.

        Returns
        -------
        list of str
            The lines of the text (GB/s = 10^9 bytes/s, latencies in ms).
        """
        gb = format_gbps
        n_kernels = len({k for k, _ in self.cells})
        runs = f"1 run of {self.passes} passes (--quick: the noise between runs is unknown, "
        runs += "ties judged by the passes' spread)"
        if self.runs > 1:
            runs = f"{self.runs} runs (fresh processes) of {self.passes} passes each"
            runs += f" in {self.rounds} shuffled rounds" if self.rounds > 1 else ""
        lines = [
            f"From a sweep of {n_kernels} kernels x {len(self.extents)} extents "
            f"({format_size(self.extents[0])} to {format_size(self.extents[-1])}), "
            f"clearing a {format_size(self.region_bytes)} region on {self.backing} "
            f"pages in batches of each extent, {runs}, {self.seconds:.1f} s "
            "(GB/s = 10^9 bytes/s; medians over runs):",
            "Candidates within the noise between runs are tied (the larger of twice "
            f"the sweep's noise, {self._noise_text()}, and {TIE_FLOOR_PCT:g}%); among tied "
            "kernels, clear_pages()'s "
            f"({self.knee_kernel}) if tied, else the first in the kernel table.",
            "",
            "Fastest kernel by extent:",
        ]
        if any(r.get("pooled") for r in self.best_kernel):
            lines[-1] = (
                "Fastest kernel by extent (from the cache's size on, one question judged "
                "over all its extents: which stores stream fastest to memory):"
            )
        if self.interrupted:
            lines[1:1] = [
                f"Interrupted by {self.interrupted}: from the {len(self.cells)} "
                "cells measured before it, partly with fewer runs."
            ]
        for r in self.best_kernel:
            lo, hi = format_size(r["min_bytes"]), format_size(r["max_bytes"])
            span = lo if lo == hi else f"{lo} to {hi}"
            tied = f"  (tied: {', '.join(r['tied'])})" if r.get("tied") else ""
            pooled = "  (judged as one range, paired within runs)" if r.get("pooled") else ""
            lines.append(f"  {span:<16} {r['kernel']:<20} {gb(r['bytes_per_sec'])}{tied}{pooled}")
        lines += [
            "",
            self._knee_line(),
            "",
            "Batch for clear_pages() between resched points, by the worst batch "
            "of 9 visits in 10 (p90: per visit of a cell, the slowest batch position, "
            "each position's time the median over the visit's passes; its 90th "
            f"percentile over every visit of every run, with {TIE_FLOOR_PCT:g}% added, "
            "must fit the budget, so one visit another task interrupted does not "
            "decide; typical: the median over runs; max: the slowest batch of all "
            "runs); among tied, the largest batch:",
        ]
        for row, fits in zip(self.batch, self.batch_fits):
            what = (
                f"{format_size(row['batch_bytes'])} with {row['kernel']}, "
                f"{gb(row['bytes_per_sec'])}, worst batch p90 "
                f"{row['p90_worst_ms']:.2f} ms (typical {row['typical_worst_ms']:.2f} ms, "
                f"max {row['max_worst_ms']:.2f} ms)"
            )
            if not fits:
                what = f"nothing measured fits; closest: {what}"
            lines.append(f"  {row['budget_ms']:g} ms: {what}")
            if row["tied"]:
                measured = {k for k, _ in self.cells}
                lines.append(f"      tied: {_tied_cells(row['tied'], measured)}")
        return lines

    def _knee_line(self) -> str:
        gb = format_gbps
        knee_rates = {
            e: c["bytes_per_sec"] for (k, e), c in self.cells.items() if k == self.knee_kernel
        }
        below = [r for e, r in knee_rates.items() if KNEE_MIN_EXTENT <= e < self.knee_bytes]
        above = [r for e, r in knee_rates.items() if e >= self.knee_bytes]
        llc, tied, where = "the LLC size is unknown (sysfs gives none)", "", ""
        if self.llc_bytes:
            llc = f"the LLC is {format_size(self.llc_bytes)} (sysfs)"
            where = f", so the knee sits at {self.knee_bytes / self.llc_bytes:.2g}x the LLC"
        measured = (self.cache or {}).get("cache_bytes")
        if measured and (self.cache or {}).get("source") == "measured":
            # No knee is placed against sysfs's LLC where the run has another cache.
            llc += f"; the cache this run has is {format_size(measured)} (measured)"
            where = ""
        if self.knee_tied:
            tied = f"; tied within noise: {', '.join(format_size(e) for e in self.knee_tied)} "
            tied += "(the smallest is taken)"
        if is_clear_step(self.knee_step):
            return (
                f"Knee: {self.knee_kernel} (clear_pages() here) clears "
                f"{self.knee_step:.1f}x faster from {format_size(self.knee_bytes)} on "
                f"({gb(statistics.median(below))} below, {gb(statistics.median(above))} "
                f"from there): from that extent the CPU stops allocating cache lines for "
                f"its stores; {llc}{where}{tied}."
            )
        return (
            f"Knee: none clear for {self.knee_kernel} (clear_pages() here): its largest "
            f"step is only {self.knee_step:.2f}x, at {format_size(self.knee_bytes)}; "
            f"{llc}."
        )


def _tied_cells(tied: Iterable[Mapping[str, Any]], kernels_measured: set[str]) -> str:
    """A row's tied cells in words: "16MB x86-64-avx-nt, x86-64-movnti; 32MB every kernel"."""
    by_extent: dict[int, list[str]] = {}
    for t in tied:
        by_extent.setdefault(t["batch_bytes"], []).append(t["kernel"])
    return "; ".join(
        f"{format_size(e)} {'every kernel' if set(ks) >= kernels_measured else ', '.join(ks)}"
        for e, ks in by_extent.items()
    )
