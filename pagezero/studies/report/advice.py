"""`pagezero advise` in the report: a batch per latency budget, answers opening the summary."""

import os

from pagezero.analysis.cache import INFO_KEY, run_cache
from pagezero.interrupt import as_interrupted
from pagezero.studies.advise.study import advise
from pagezero.studies.advise.text import tie_words, ties_rule
from pagezero.studies.report.cells import Section, save_json
from pagezero.studies.report.words import md_table, rate, text_table
from pagezero.units import format_size


def study_advice(out_dir, cfg, info, functions, progress):
    """pagezero.advise() (its quick sweep with cfg's "quick") as advice.json and tables."""
    quick = cfg["quick"]
    interrupted = None
    try:
        # The extents study's measured cache, where it ran: advise need not measure it again.
        cache = run_cache(info) if info.get(INFO_KEY) else None
        advice = advise(quick=quick, cache=cache)
    except KeyboardInterrupt as e:
        # advise's partial: the Advice from the cells measured, or None.
        stop = as_interrupted(e)
        if stop.partial is None:
            raise
        advice, interrupted = stop.partial, stop.signame
    section = Section("Advice", interrupted=interrupted)
    path = os.path.join(out_dir, "advice.json")
    return save_json(section, path, advice.to_json(), lambda: _tabulate(section, advice, quick))


def _answer(row, fits, own, advice):
    """A budget's answer, its rate first: batch, kernel, worst batch, ties; clear_pages()'s own."""
    budget = f"{row['budget_ms']:g} ms"
    batch, worst = format_size(row["batch_bytes"]), f"{row[row['checked_against']]:.2f}"
    if not fits:
        return (
            f"{worst} ms, over a {budget} budget: the closest batch, {batch} of "
            f"{row['kernel']}, in 9 visits of 10 (advice table)."
        )
    why = tie_words(row, gb=lambda r: f"{rate(r)} GB/s", noise=False)
    mine = ""
    if own is not None and row["kernel"] != advice.knee_kernel:
        own_row, own_fits = own
        mine = f"; clear_pages()'s {advice.knee_kernel}: "
        mine += (
            f"{format_size(own_row['batch_bytes'])}, {rate(own_row['bytes_per_sec'])} GB/s"
            if own_fits
            else "nothing fits"
        )
    return (
        f"{rate(row['bytes_per_sec'])} GB/s within a {budget} budget: {batch} batches of "
        f"{row['kernel']} (worst {worst} ms), {why}{mine} (advice table)."
    )


def _tabulate(section, advice, quick):
    region = format_size(advice.region_bytes)
    beyond = ""
    cache = (advice.cache or {}).get("effective_bytes") or advice.llc_bytes
    if cache and advice.region_bytes > cache:
        beyond = " (larger than the cache, as the kernel clears fresh pages)"
    question = f"clearing a {region} region{beyond} in batches between resched points"
    header = ["budget (ms)", "batch", "kernel", "GB/s", "worst batch, 9 in 10 (ms)", "fits"]
    header.append("tied with")
    rows, own_rows, text, own = [], [], [], advice.clear_pages_batches()
    for i, (row, fits) in enumerate(zip(advice.batch, advice.batch_fits)):
        fastest = max((t["bytes_per_sec"] for t in row["tied"]), default=0.0)
        faster = rate(fastest) if fastest > row["bytes_per_sec"] else "-"
        rows.append([*_table_row(row, fits), faster])
        mine = own[i] if i < len(own) else None
        own_rows += [_table_row(*mine)] if mine else []
        section.answers.append(_answer(row, fits, mine, advice))
        text.append(_text_row(row, fits, mine))
    section.text = text_table(
        ["budget", "batch", "kernel", "GB/s", "worst ms", "clear_pages()", "GB/s"], text
    )
    section.rules = [
        f"The advice table: {question}; worst batch: in 9 visits of 10. "
        + ties_rule(advice.cells, advice.knee_kernel)
    ]
    if vector := advice.vector_line():
        section.summary.append(vector)
    sweep = " (its quick sweep)" if quick else ""
    section.body = [
        f"From `pagezero advise`{sweep}: {question}, per latency budget (GB/s = 10^9 bytes/s):",
        "",
        *md_table([*header, "fastest tied (GB/s)"], rows),
        "",
        f"With clear_pages()'s own kernel ({advice.knee_kernel}) alone, by the same rules:",
        "",
        *md_table(header, own_rows),
        *["", "Its own account:", "", "```", *advice.describe(explain=True), "```"],
    ]


def _table_row(row, fits):
    """A budget's cells in the advice tables, up to its tied column ("-": none tied)."""
    tied = ", ".join(f"{format_size(t['batch_bytes'])} {t['kernel']}" for t in row["tied"])
    worst = f"{row[row['checked_against']]:.2f}"
    batch, gb = format_size(row["batch_bytes"]), rate(row["bytes_per_sec"])
    fit = "yes" if fits else "no"
    return [f"{row['budget_ms']:g}", batch, row["kernel"], gb, worst, fit, tied or "-"]


def _text_row(row, fits, own):
    """A budget's row of summary.txt's table: the batch chosen, clear_pages()'s own beside it."""
    budget, batch, kernel, gb, worst = _table_row(row, fits)[:5]
    mine = ["-", "-"]
    if own is not None and own[1]:
        mine = [format_size(own[0]["batch_bytes"]), rate(own[0]["bytes_per_sec"])]
    return [f"{budget} ms", batch, kernel, gb, worst + ("" if fits else " (over)"), *mine]
