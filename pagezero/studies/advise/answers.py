"""advise's answers, one line each: per budget the batch, its tie rule, clear_pages()'s own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pagezero.studies.advise.choices import batch_for_budget
from pagezero.studies.advise.ties import CHECKED_AGAINST, TIE_FLOOR_PCT, Cells, fits_budget, tied
from pagezero.units import format_gbps, format_size

Row = Mapping[str, Any]  # a "batch" row of the JSON (choices.batch_for_budget)


def own_kernel_batches(
    cells: Cells, budgets_ms: Sequence[float], clear_pages: str
) -> list[tuple[dict[str, Any], bool]]:
    """Per budget, the batch for clear_pages()'s kernel alone (the row and whether it fits)."""
    mine = {c: v for c, v in cells.items() if c[0] == clear_pages}
    if not mine:
        return []
    return [batch_for_budget(mine, b, [clear_pages], clear_pages) for b in budgets_ms]


def ties_rule(cells: Cells, clear_pages: str) -> str:
    """How ties are judged and chosen among, said once for every answer ("Ties: ...")."""
    noise = next((c.get("noise_pct") for c in cells.values()), None)
    noise_text = "unknown with one run" if noise is None else f"{noise:.1f}%"
    return (
        "Ties: candidates within the noise between runs are tied (the larger of twice the "
        f"sweep's noise, {noise_text}, and {TIE_FLOOR_PCT:g}%); among tied kernels, "
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
