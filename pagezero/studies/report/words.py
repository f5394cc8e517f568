"""The report's numbers in words: a figure the summary quotes is the very string of a table cell."""

import statistics

from pagezero.analysis.compare import aligned
from pagezero.analysis.knee import KNEE_MIN_EXTENT, find_knee, is_clear_step
from pagezero.results.points import summarize_points
from pagezero.studies.advise.choices import best_kernels
from pagezero.studies.advise.ties import sweep_noise
from pagezero.units import format_size, gbps

# Beyond the LLC, placement decides more than anything inside one process (3-5% between
# processes at 256MB on a Zen 4 VM): a cell spread wider is marked.
SPREAD_LIMIT_PCT = 5.0
SPREAD_MARK = "*"


# The two questions a "fastest" answers: they have different answers, since the stores that
# skip the caches lose while the buffer fits in them.
HOT_QUESTION = "reusing a buffer while it is hot (in cache)"
STREAM_QUESTION = "streaming through a region larger than the LLC, as the kernel clears fresh pages"


def rate(bytes_per_sec):
    """A rate in GB/s (10^9): 1 decimal, 2 below 1 GB/s; "-" for None."""
    if bytes_per_sec is None:
        return "-"
    g = gbps(bytes_per_sec)
    return f"{g:.1f}" if g >= 1 else f"{g:.2f}"


def ratio(r):
    """A ratio of two rates: "1.25x"."""
    return f"{r:.2f}x"


def span(lo, hi):
    """A range of sizes: "4KB to 2MB", or one size when both ends agree."""
    return format_size(lo) if lo == hi else f"{format_size(lo)} to {format_size(hi)}"


def marked(cell, llc):
    """Whether a cell beyond the cache `llc` (any, when 0) spread over SPREAD_LIMIT_PCT in runs."""
    beyond = not llc or (cell.get("size") or 0) > llc
    return beyond and cell["spread_of"] == "runs" and cell["spread_pct"] > SPREAD_LIMIT_PCT


def cell_text(cell, llc):
    """A table cell: the median rate, its interval, SPREAD_MARK when marked; "-" for None."""
    if cell is None:
        return "-"
    mark = SPREAD_MARK if marked(cell, llc) else ""
    return f"{rate(cell['median'])} +-{cell['spread_pct']:.0f}%{mark}"


def interval_text(cell):
    """A point's interval with what it spans: "+-1.2% (3 runs)", "+-0.4% (loops, 1 run)"."""
    of = f"{cell['runs']} runs" if cell["spread_of"] == "runs" else "loops, 1 run"
    return f"+-{cell['spread_pct']:.1f}% ({of})"


def markdown_table(table, xs, x_label, llc, pages=None):
    """A table of cells(): a row per x (its pages, where given), a column per function."""
    functions = sorted(table)
    rows = [
        [format_size(x), *([pages.get(x, "-")] if pages else [])]
        + [cell_text(table[f].get(x), llc) for f in functions]
        for x in xs
    ]
    lines = md_table([x_label] + ["pages"] * bool(pages) + functions, rows)
    if any(marked(c, llc) for by_x in table.values() for c in by_x.values()):
        lines += ["", spread_footnote()]
    return lines


def md_table(header, rows):
    """A markdown table of cells already in words."""
    lines = ["| " + " | ".join(r) + " |" for r in (header, *rows)]
    return [lines[0], "|" + "---|" * len(header), *lines[1:]]


def text_table(header, rows):
    """summary.txt's fixed-width table: figures right-aligned, words and the first column left."""
    columns = enumerate(zip(header, *rows))
    figures = {i for i, c in columns if i and all(x[:1] in "0123456789+-" for x in c[1:])}
    return aligned([header, *rows], "  ", figures)[0]


def spread_footnote():
    """The footnote that explains SPREAD_MARK."""
    return (
        f"{SPREAD_MARK} beyond the cache, the runs' medians of this cell spread by more "
        f"than {SPREAD_LIMIT_PCT:g}% (coefficient of variation): each process got its "
        f"own physical placement of the buffer; more runs (--runs) narrow it down."
    )


def runs_line(rs):
    """How many runs the cells of a result set stand on, in one sentence ("" when empty)."""
    summaries = [s for _, s in summarize_points(rs).values()]
    if not summaries:
        return ""
    n = min(s["runs"] for s in summaries)
    if n < 2:
        return (
            "Cells: medians of one run (one process) +- the spread of its loops: the "
            "spread between runs is unknown; `pagezero report --runs 3` measures it."
        )
    return (
        f"Cells: the median of {n} runs' medians, each run a fresh process, +- the "
        f"spread between runs (as the figures draw them)."
    )


def tied_with(names):
    """Kernels tied with the one named: named where one or two, else counted."""
    if len(names) > 2:
        return f"tied with {len(names)} others"
    return f"tied with {' and '.join(names)}" if names else ""


def fastest_lines(table, xs, llc, cache_words=None, order=(), clear_pages=""):
    """A sentence per question (hot, streaming: split at `llc`): its kernel per range of extents,
    chosen among the kernels tied within the noise by advise's rule (`order`, `clear_pages`)."""
    rates = {f: {x: c["median"] for x, c in by_x.items()} for f, by_x in table.items()}
    # advise's cells: judged by the sweep's noise, as advise judges its own.
    noise = sweep_noise(
        c["spread_pct"]
        for by_x in table.values()
        for c in by_x.values()
        if c["spread_of"] == "runs"
    )
    judged = {
        (f, x): {"bytes_per_sec": c["median"], "spread_pct": c["spread_pct"], "noise_pct": noise}
        for f, by_x in table.items()
        for x, c in by_x.items()
    }
    hot, stream = [x for x in xs if not llc or x <= llc], [x for x in xs if llc and x > llc]
    questions = (HOT_QUESTION, STREAM_QUESTION)
    if cache_words:  # the questions naming the cache they mean
        questions = (
            f"reusing a buffer while it is hot, in a cache of {cache_words}",
            f"streaming through a region larger than the cache, {cache_words}, as the kernel "
            "clears fresh pages",
        )
    lines = []
    for question, group in zip(questions, (hot, stream)):
        ranges = []  # the question said once, then each range of extents and its kernel
        for r in best_kernels(judged, group, order, clear_pages) if group else ():
            lo, hi, k = r["min_bytes"], r["max_bytes"], r["kernel"]
            ends = f"{rate(rates[k][lo])} GB/s at {format_size(lo)}"
            if hi != lo:
                ends += f", {rate(rates[k][hi])} GB/s at {format_size(hi)}"
            ties = f", {tied_with(r['tied'])}" if r["tied"] else ""
            ranges.append(f"{span(lo, hi)}: {k}{ties} ({ends})")
        if ranges:
            lines.append(
                f"{question[0].upper()}{question[1:]}, the kernel that clears fastest by "
                f"extent (of kernels tied within the noise, clear_pages()'s, else the first in "
                f"the kernel table): {'; '.join(ranges)}."
            )
    return lines


def knee_of(by_chunk):
    """The step in rate with chunk size: the knee, each side's chunks and median, their ratio."""
    # The step is the ratio of the two medians quoted beside it: a reader can redo it.
    try:
        knee, _ = find_knee(by_chunk.items())
    except ValueError:
        return None
    xs = sorted(x for x in by_chunk if x >= KNEE_MIN_EXTENT)
    below, above = [x for x in xs if x < knee], [x for x in xs if x >= knee]
    lo = statistics.median(by_chunk[x] for x in below)
    hi = statistics.median(by_chunk[x] for x in above)
    return dict(knee=knee, below=below, above=above, below_rate=lo, above_rate=hi, step=hi / lo)


def knee_row(kernel, k):
    """The chunk study's knee table cells of one kernel (knee_of()'s figures)."""
    below, above = span(k["below"][0], k["below"][-1]), span(k["above"][0], k["above"][-1])
    return [kernel, below, rate(k["below_rate"]), above, rate(k["above_rate"]), ratio(k["step"])]


def knee_line(kernel, k, by_chunk, llc, region, label, evidence=False, cache_words=None):
    """The chunk study's sentence of one kernel; cache-line allocation only with `evidence`."""
    xs = sorted(by_chunk)
    if not is_clear_step(k["step"]):
        return (
            f"{kernel}: no clear step in rate with chunk size up to {format_size(xs[-1])} "
            f"(whole {format_size(region)} region on {label} pages: "
            f"{rate(by_chunk[xs[-1]])} GB/s)."
        )
    where = (
        f"chunks of {span(k['above'][0], k['above'][-1])} clear {ratio(k['step'])} as fast "
        f"as chunks of {span(k['below'][0], k['below'][-1])} (medians "
        f"{rate(k['above_rate'])} vs {rate(k['below_rate'])} GB/s), clearing a "
        f"{format_size(region)} region on {label} pages"
    )
    knee, last_below = k["knee"], k["below"][-1]
    if llc and llc // 2 <= knee <= 2 * llc and last_below >= llc // 4:
        cache = cache_words or f"LLC: {format_size(llc)}"
        if evidence:
            # The threshold "mm: folio_zero_user: clear contiguous pages" (2025) reports on
            # AMD Zen: long enough stores stop allocating cache lines near the LLC size.
            return (
                f"{kernel} stops allocating cache lines above ~{format_size(last_below)} per "
                f"call here, a step the non-temporal stores do not show ({cache}): {where}."
            )
        return (
            f"{kernel}: the rate steps up at {format_size(knee)} per call, near the cache "
            f"({cache}): {where}."
        )
    return f"{kernel}: the rate steps up at {format_size(knee)} per call: {where}."
