"""`pagezero advise` in the report: the batch size for clear_pages() per latency budget, with
the kernel to use, as a table the summary quotes."""

import os

from pagezero.analysis.cache import INFO_KEY, run_cache
from pagezero.interrupt import as_interrupted
from pagezero.studies.advise.study import advise
from pagezero.studies.report.cells import Section, save_json
from pagezero.studies.report.words import rate
from pagezero.units import format_size


def _tied_text(tied):
    """A row's tied alternatives in words ("-" when none)."""
    return ", ".join(f"{format_size(t['batch_bytes'])} {t['kernel']}" for t in tied) or "-"


def study_advice(out_dir, cfg, info, functions, progress, quick):
    """pagezero.advise() as advice.json and a table per latency budget."""
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


def _tabulate(section, advice, quick):
    region = format_size(advice.region_bytes)
    beyond = ""
    cache = (advice.cache or {}).get("effective_bytes") or advice.llc_bytes
    if cache and advice.region_bytes > cache:
        beyond = " (larger than the cache, as the kernel clears fresh pages)"
    question = f"clearing a {region} region{beyond} in batches between resched points"
    rows = [
        "| budget (ms) | batch | kernel | GB/s | worst batch, 9 in 10 (ms) | fits | tied with |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, fits in zip(advice.batch, advice.batch_fits):
        batch, worst = format_size(row["batch_bytes"]), f"{row[row['checked_against']]:.2f}"
        rows.append(
            f"| {row['budget_ms']:g} | {batch} | {row['kernel']} | "
            f"{rate(row['bytes_per_sec'])} | {worst} | {'yes' if fits else 'no'} | "
            f"{_tied_text(row['tied'])} |"
        )
        if fits:
            section.summary.append(
                f"For {question}, within a {row['budget_ms']:g} ms budget: batches of {batch} "
                f"with {row['kernel']} clear fastest ({rate(row['bytes_per_sec'])} GB/s, "
                f"worst batch {worst} ms in 9 visits of 10; advice table)."
            )
        else:
            section.summary.append(
                f"For {question}: no batch measured stays within {row['budget_ms']:g} ms here."
            )
    sweep = " (its quick sweep)" if quick else ""
    section.body = [
        f"From `pagezero advise`{sweep}: {question}, per latency budget (GB/s = 10^9 bytes/s):",
        "",
        *rows,
        *["", "Its own account:", "", "```", *advice.describe(), "```"],
    ]
