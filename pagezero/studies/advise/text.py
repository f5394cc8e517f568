"""The advice of pagezero advise as a value (Advice): its JSON, its text and its answers,
one line each; what using an advised vector kernel takes."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagezero.analysis.knee import KNEE_MIN_EXTENT, clear_knee, is_clear_step
from pagezero.studies.advise.choices import batch_for_budget
from pagezero.studies.advise.ties import CHECKED_AGAINST, TIE_FLOOR_PCT, Cells, fits_budget, tied
from pagezero.system.kernels import Kernel, kernels
from pagezero.units import format_gbps, format_size

Row = Mapping[str, Any]  # a "batch" row of the JSON (choices.batch_for_budget)


def ties_rule(cells: Cells, clear_pages: str) -> str:
    """How ties are judged and chosen among, said once for every answer ("Ties: ...")."""
    noise = next((c.get("noise_pct") for c in cells.values()), None)
    noise_text = "unknown with one run" if noise is None else f"{noise:.1f}%"
    return (
        "Ties: candidates within the noise between runs are tied (the larger of twice the "
        f"sweep's noise, {noise_text}, twice the standard error of the pair's gap over runs, "
        f"and {TIE_FLOOR_PCT:g}%); among tied kernels, "
        f"clear_pages()'s ({clear_pages}) if tied, else the first in the kernel table; among "
        "tied batches for a budget, the largest (fewest resched points), then the kernel rule "
        "among the kernels tied at that batch."
    )


def is_fastest(row: Row) -> bool:
    """Whether the row's batch and kernel are the fastest of the candidates it was chosen from."""
    best = max([row, *row["tied"]], key=lambda r: r["bytes_per_sec"])  # the row, on equal rates
    return (best["batch_bytes"], best["kernel"]) == (row["batch_bytes"], row["kernel"])


def tie_words(row: Row, gb: Callable[[float], str] = format_gbps, noise: bool = True) -> str:
    """A fitting row the fastest, or tied with others ("within the noise" with `noise`)."""
    n = len(row["tied"])
    if not n:
        return "the fastest that fits"
    others = f"tied with {n} other{'s' if n > 1 else ''}" + " within the noise" * noise
    if is_fastest(row):
        return f"the fastest, {others}"
    best = max(row["tied"], key=lambda r: r["bytes_per_sec"])
    fastest = f"{format_size(best['batch_bytes'])} {best['kernel']}, {gb(best['bytes_per_sec'])}"
    return f"{others} (the fastest: {fastest})"


def chosen_by(row: Row, cells: Cells, clear_pages: str, pooled: Sequence[Row] = ()) -> str | None:
    """The rule that chose `row` among its ties (`pooled`: rows judged as one range), or None."""
    if not row["tied"]:
        return None
    extent = row["batch_bytes"]
    rules = []
    if any(t["batch_bytes"] != extent for t in row["tied"]):
        rules.append("the largest batch (fewest resched points)")
    here = {k: c for (k, e), c in cells.items() if e == extent and fits_budget(c, row["budget_ms"])}
    top = max(here.values(), key=lambda c: c["bytes_per_sec"]) if here else None
    tied_here = [k for k, c in here.items() if top is not None and tied(top, c)]
    in_range = next((r for r in pooled if r["min_bytes"] <= extent <= r["max_bytes"]), None)
    if in_range is not None and len(here) > 1:
        lo, hi = format_size(in_range["min_bytes"]), format_size(in_range["max_bytes"])
        rules.append(
            f"the kernel of {lo} to {hi}, judged as one range"
            if row["kernel"] == in_range["kernel"]
            else f"the first of the kernels tied over {lo} to {hi} (judged as one range) that fits"
        )
    elif len(tied_here) > 1 and row["kernel"] in tied_here:
        rules.append(
            "clear_pages()'s own kernel"
            if row["kernel"] == clear_pages
            else "the first tied kernel in the kernel table"
        )
    return ", then ".join(rules) or "the tie rules"


def _what(row: Row, kernel: bool = True) -> str:
    """A row's batch, kernel, rate and worst batch: "8MB batches of K, 25.8 GB/s, worst ..."."""
    of = f" of {row['kernel']}" if kernel else ""
    return (
        f"{format_size(row['batch_bytes'])} batches{of}, {format_gbps(row['bytes_per_sec'])}, "
        f"worst batch {row[CHECKED_AGAINST]:.2f} ms"
    )


def verdict(row: Row, cells: Cells, clear_pages: str, pooled: Sequence[Row] = ()) -> str:
    """Whether a fitting row is the fastest, or which rule chose it among the tied, in words."""
    if not row["tied"]:
        return tie_words(row)
    rule = chosen_by(row, cells, clear_pages, pooled)
    return f"{tie_words(row)}{';' if is_fastest(row) else ','} chosen by {rule}"


def budget_line(
    row: Row, fits: bool, cells: Cells, clear_pages: str, pooled: Sequence[Row] = ()
) -> str:
    """One budget's answer: "1 ms -> 8MB batches of K, 25.8 GB/s, worst batch 0.36 ms: ..."."""
    head = f"{row['budget_ms']:g} ms -> "
    if not fits:
        return f"{head}nothing measured fits; closest: {_what(row)}"
    return f"{head}{_what(row)}: {verdict(row, cells, clear_pages, pooled)}"


def own_kernel_line(row: Row, fits: bool, clear_pages: str) -> str:
    """The batch for clear_pages()'s kernel alone, under its budget's answer."""
    head = f"with clear_pages()'s own {clear_pages}: "
    if not fits:
        return f"{head}nothing measured fits; closest: {_what(row, kernel=False)}"
    n = len(row["tied"])
    tail = ""
    if n:
        tail = f"; tied with {n} other batch{'es' if n > 1 else ''}, chosen by the largest"
    return f"{head}{_what(row, kernel=False)}{tail}"


# Per architecture: the instruction sets whose registers are the FPU context (as /proc/cpuinfo
# names them), the pair that wraps their use and what it costs, the rows that need neither.
_VECTOR = {
    "x86-64": (
        frozenset({"sse", "sse2", "sse4_1", "avx", "avx2", "avx512f"}),
        "kernel_fpu_begin()/kernel_fpu_end() (arch/x86/include/asm/fpu/api.h), which turn "
        "preemption off (each batch is then non-preemptible for as long as its worst batch "
        "above) and save the task's user FPU state once per kernel entry (XSAVE, not in "
        "these figures)",
        "rep stos, movnti and clzero",
    ),
    "arm64": (
        frozenset({"asimd", "sve", "sve2"}),
        "kernel_neon_begin()/kernel_neon_end() (arch/arm64/include/asm/neon.h), which save "
        "the task's FP/SIMD registers first (not in these figures)",
        "stp, stnp, DC ZVA and MOPS",
    ),
}


def uses_vector_registers(kernel: Kernel) -> bool:
    """Whether `kernel` stores from vector registers (the FPU context the kernel must save)."""
    # A SIMD set and 16-byte stores: movnti needs SSE2 but stores from a general register,
    # clzero needs 64-byte alignment but no SIMD set.
    simd = _VECTOR[kernel.arch][0] if kernel.arch in _VECTOR else frozenset()
    return bool(simd & set(kernel.features)) and kernel.align >= 16


def vector_context_line(advised: Iterable[str]) -> str | None:
    """One line on what a kernel needs to use the advised vector kernels, or None if none is."""
    wanted = set(advised)
    vector = [k for k in kernels("clear") if k.name in wanted and uses_vector_registers(k)]
    if not vector:
        return None
    _, wrapper, plain = _VECTOR[vector[0].arch]
    names = ", ".join(k.name for k in vector)
    store = "stores" if len(vector) == 1 else "store"
    return (
        f"{names} {store} from vector registers: a kernel patch must wrap each batch in "
        f"{wrapper}; {plain} need none of it."
    )


@dataclass(frozen=True)
class Advice:
    """What pagezero advise found for this machine (made by advise()).

    Attributes
    ----------
    knee_bytes, knee_step : int or None, float
        clear_pages()'s kernel's best one-step split (bytes; to_json() says null unless a
        clear step), and the upper level / the lower level around it.
    knee_kernel, knee_tied : str, tuple of int
        The kernel whose knee is given (clear_pages()'s); other extents tied within noise.
    llc_bytes, cache : int, dict or None
        sysfs's LLC (0 when unknown); the cache the run has (MeasuredCache.to_json()) or None.
    best_kernel, batch, batch_fits : tuple of dict, tuple of dict, tuple of bool
        The JSON rows (with "tied") of the fastest kernel by extent range and of the batch
        per latency budget; per batch row, whether anything met the budget.
    extents, region_bytes, backing : tuple of int, int, str
        The extents swept and the region cleared, in bytes; the region's pages, in words.
    runs, rounds, passes, seconds : int, int, int, float
        The runs (processes); the shuffled visits of every cell per run; the timed passes
        per cell and run over all its rounds; the sweep's wall time (s).
    cells : dict of (str, int) to dict
        {(kernel, extent): cell}, see cells_from_results().
    interrupted : str or None
        None, or the signal that cut the sweep short ("SIGINT").
    """

    knee_bytes: int | None
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

    def clear_pages_batches(self) -> list[tuple[dict[str, Any], bool]]:
        """Per budget, the batch for clear_pages()'s own kernel alone, and whether it fits.

        Returns
        -------
        list of (dict, bool)
            Rows of the "batch" shape, chosen by the same rules, in the budgets' order.
        """
        own = self.knee_kernel
        mine = {c: v for c, v in self.cells.items() if c[0] == own}
        if not mine:
            return []
        return [batch_for_budget(mine, r["budget_ms"], [own], own) for r in self.batch]

    def to_json(self) -> dict[str, Any]:
        """The advice as the documented JSON shape.

        Returns
        -------
        dict
            The shape docs/policies.rst documents (``pagezero advise --format json``).
        """
        split = None if self.knee_bytes is None else int(self.knee_bytes)
        doc: dict[str, Any] = {
            "knee_bytes": None if split is None else clear_knee(split, self.knee_step),
            "knee_step": float(self.knee_step),
            "knee_split_bytes": split,
            "knee_extents": [int(e) for e in self.extents if e >= KNEE_MIN_EXTENT],
            "cache": self.cache,
            "llc_bytes": int(self.llc_bytes),
            "best_kernel": [dict(r) for r in self.best_kernel],
            "batch": [dict(r) for r in self.batch],
            "clear_pages_batch": [r for r, _ in self.clear_pages_batches()],
            "knee_tied": [int(e) for e in self.knee_tied],
            "runs": int(self.runs),
            "backing": self.backing,
        }
        if self.interrupted:
            doc["interrupted"] = self.interrupted
        return doc

    def describe(self, explain: bool = False) -> list[str]:
        """The advice in plain words: the answers first, then how they were found.

        Parameters
        ----------
        explain : bool
            Also give the method: ties and budgets (``pagezero advise --explain``).

        Returns
        -------
        list of str
            The lines of the text (GB/s = 10^9 bytes/s, latencies in ms).
        """
        lines = []
        if self.interrupted:
            lines.append(
                f"Interrupted by {self.interrupted}: from the {len(self.cells)} "
                "cells measured before it, partly with fewer runs."
            )
        lines += self._budget_lines()
        if vector := self.vector_line():
            lines += ["", vector]
        lines += ["", *self._kernel_lines(), "", self._knee_line()]
        lines += ["", self._sweep_line(explain)]
        if explain:
            lines += self._method_lines()
        return lines

    def vector_line(self) -> str | None:
        """What using an advised vector kernel takes, said once under the answers (or None)."""
        return vector_context_line([r["kernel"] for r in (*self.batch, *self.best_kernel)])

    def _budget_lines(self) -> list[str]:
        pooled = [r for r in self.best_kernel if r.get("pooled")]
        lines = [
            "Per latency budget, the batch for clear_pages() between resched points "
            "(GB/s = 10^9 bytes/s; worst batch: the slowest batch of a visit, in 9 visits "
            "of 10):"
        ]
        own = self.clear_pages_batches()
        for i, (row, fits) in enumerate(zip(self.batch, self.batch_fits)):
            lines.append("  " + budget_line(row, fits, self.cells, self.knee_kernel, pooled))
            mine = own[i][0] if i < len(own) else row  # said where it is not the row's
            if (mine["batch_bytes"], mine["kernel"]) != (row["batch_bytes"], row["kernel"]):
                lines.append("      " + own_kernel_line(*own[i], self.knee_kernel))
        return lines

    def _kernel_lines(self) -> list[str]:
        any_pooled = any(r.get("pooled") for r in self.best_kernel)
        lines = [
            "Kernel by extent (the fastest; among kernels tied within the noise, "
            "clear_pages()'s if tied, else the first in the kernel table"
            + "; from the cache's size on, one question judged over all its extents: which "
            "stores stream fastest to memory" * any_pooled + "):"
        ]
        for r in self.best_kernel:
            lo, hi = format_size(r["min_bytes"]), format_size(r["max_bytes"])
            span = lo if lo == hi else f"{lo} to {hi}"
            tied = f"  (tied: {', '.join(r['tied'])})" if r.get("tied") else ""
            pooled = "  (judged as one range, paired within runs)" if r.get("pooled") else ""
            lines.append(
                f"  {span:<16} {r['kernel']:<20} {format_gbps(r['bytes_per_sec'])}{tied}{pooled}"
            )
        return lines

    def _sweep_line(self, explain: bool) -> str:
        n_kernels = len({k for k, _ in self.cells})
        runs = f"1 run of {self.passes} passes (--quick: the noise between runs is unknown, "
        runs += "ties judged by the passes' spread)"
        if self.runs > 1:
            runs = f"{self.runs} runs (fresh processes) of {self.passes} passes each"
            runs += f" in {self.rounds} shuffled rounds" if self.rounds > 1 else ""
        span = f"{format_size(self.extents[0])} to {format_size(self.extents[-1])}"
        more = "" if explain else "; --explain says how they were judged and chosen"
        return (
            f"From a sweep of {n_kernels} kernels x {len(self.extents)} extents ({span}), "
            f"clearing a {format_size(self.region_bytes)} region on {self.backing} pages in "
            f"batches of each extent, {runs}, {self.seconds:.1f} s (medians over runs){more}."
        )

    def _method_lines(self) -> list[str]:
        lines = [
            "",
            ties_rule(self.cells, self.knee_kernel),
            "",
            "Budgets: a batch fits when its worst batch of 9 visits in 10 does (p90: per "
            "visit of a cell, the slowest batch position, each position's time the median "
            "over the visit's passes; its 90th percentile over every visit of every run, "
            f"with {TIE_FLOOR_PCT:g}% added, must fit the budget, so one visit another task "
            "interrupted does not decide).",
            "",
            "Every budget's candidates (typical: the median over runs of the worst batch; "
            "max: the slowest batch of all runs):",
        ]
        measured = {k for k, _ in self.cells}
        for row in self.batch:
            lines.append(
                f"  {row['budget_ms']:g} ms: {format_size(row['batch_bytes'])} "
                f"{row['kernel']}, worst batch p90 {row['p90_worst_ms']:.2f} ms (typical "
                f"{row['typical_worst_ms']:.2f} ms, max {row['max_worst_ms']:.2f} ms)"
            )
            if row["tied"]:
                lines.append(f"      tied: {_tied_cells(row['tied'], measured)}")
        return lines

    def _knee_line(self) -> str:
        llc, tied, where = "the LLC size is unknown (sysfs gives none)", "", ""
        if self.llc_bytes:
            llc = f"the LLC is {format_size(self.llc_bytes)} (sysfs)"
        cache = self.cache or {}
        measured = cache.get("cache_bytes") if cache.get("source") == "measured" else None
        if measured:
            # No knee is placed against sysfs's LLC where the run has another cache.
            llc += f"; the cache this run has is {format_size(measured)} (measured)"
        if self.knee_bytes is None or not is_clear_step(self.knee_step):
            at = "" if self.knee_bytes is None else f", at {format_size(self.knee_bytes)}"
            return (
                f"Knee: none for {self.knee_kernel} (clear_pages() here): its largest step "
                f"is only {self.knee_step:.2f}x{at}; {llc}."
            )
        below: list[float] = []  # clear_pages()'s kernel's rates each side of the knee
        above: list[float] = []
        for (k, e), c in self.cells.items():
            if k == self.knee_kernel and e >= KNEE_MIN_EXTENT:
                (above if e >= self.knee_bytes else below).append(c["bytes_per_sec"])
        if self.llc_bytes and not measured:
            where = f", so the knee sits at {self.knee_bytes / self.llc_bytes:.2g}x the LLC"
        if self.knee_tied:
            tied = f"; tied within noise: {', '.join(format_size(e) for e in self.knee_tied)} "
            tied += "(the smallest is taken)"
        below_rate, above_rate = (format_gbps(statistics.median(x)) for x in (below, above))
        return (
            f"Knee: {self.knee_kernel} (clear_pages() here) clears {self.knee_step:.1f}x faster "
            f"from {format_size(self.knee_bytes)} on ({below_rate} below, {above_rate} from "
            f"there); {llc}{where}{tied}."
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
