"""`pagezero advise` in the report: the batch size for clear_pages() per
latency budget, with the kernel to use, as a table the summary quotes."""

import json
import os

from pagezero.interrupt import as_interrupted
from pagezero.results.resultset import atomic_write
from pagezero.studies.advise.study import advise
from pagezero.studies.report.cells import Section, holding
from pagezero.studies.report.words import rate
from pagezero.units import format_size

__all__ = ["study_advice"]


def _worst_ms(row):
    """The batch latency a budget was checked against: the row's
    "checked_against" names it (the 90th percentile of the visits' worst
    batch); rows without it were checked against the typical worst batch,
    named "worst_ms" before "typical_worst_ms"."""
    for key in (row.get("checked_against"), "typical_worst_ms", "worst_ms"):
        if key and key in row:
            return row[key]
    return None


def _tied_text(tied):
    """advise's tied alternatives of one row, in words ("-" when none)."""
    words = []
    for t in tied or ():
        if isinstance(t, dict):
            parts = [format_size(t["batch_bytes"]) if "batch_bytes" in t else None, t.get("kernel")]
            words.append(" ".join(p for p in parts if p))
        else:
            words.append(str(t))
    return ", ".join(words) or "-"


def _ms(value):
    return "-" if value is None else f"{value:.2f}"


def study_advice(out_dir, cfg, info, functions, progress, quick):
    """The advice study: :func:`pagezero.advise` (5 runs of 4 rounds of 2 passes, or 1 run with
    ``quick``), saved as ``advice.json`` and set out as a table per latency budget:
    the batch and kernel, its GB/s (10^9 bytes/s), the worst batch (ms) the budget was
    checked against (of 9 visits in 10), whether it fits, and the tied alternatives.

    Parameters
    ----------
    out_dir : str
        The report's folder: the study's results (JSON) and plots go there.
    cfg : dict
        The scale's settings (:data:`pagezero.studies.report.SCALES`), ``runs`` included:
        the fresh processes per point.
    info : dict
        The machine (:func:`pagezero.system.machine.machine`): its caches set the extents
        and the LLC the tables refer to.
    functions : list of str
        The clearing kernels this machine can run.
    progress : file or None
        Where the sweep's progress goes, if anywhere.
    quick : bool
        Advise at the quick scale (1 run, said so) rather than the full one.

    Returns
    -------
    Section
        The study's part of ``report.md``: its heading, body (tables, plot) and
        summary sentences; marked interrupted when a signal stopped it.
    """
    interrupted = None
    try:
        advice = advise(quick=quick)
    except KeyboardInterrupt as e:
        # advise's partial: the Advice from the cells measured, or None.
        stop = as_interrupted(e)
        if stop.partial is None:
            raise
        advice, interrupted = stop.partial, stop.signame
    section = Section("Advice", interrupted=interrupted)
    with holding(section):
        atomic_write(
            os.path.join(out_dir, "advice.json"), lambda f: json.dump(advice.to_json(), f, indent=1)
        )
        _tabulate(section, advice, quick)
    return section


def _tabulate(section, advice, quick):
    region = format_size(advice.region_bytes)
    beyond = (
        " (larger than the LLC, as the kernel clears fresh pages)"
        if advice.llc_bytes and advice.region_bytes > advice.llc_bytes
        else ""
    )
    question = f"clearing a {region} region{beyond} in batches between resched points"
    rows = [
        "| budget (ms) | batch | kernel | GB/s | worst batch, 9 in 10 (ms) | fits | tied with |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, fits in zip(advice.batch, advice.batch_fits):
        batch, worst = format_size(row["batch_bytes"]), _ms(_worst_ms(row))
        rows.append(
            f"| {row['budget_ms']:g} | {batch} | {row['kernel']} | "
            f"{rate(row['bytes_per_sec'])} | {worst} | {'yes' if fits else 'no'} | "
            f"{_tied_text(row.get('tied'))} |"
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
    section.body = (
        [
            "From `pagezero advise`"
            + (" (its quick sweep)" if quick else "")
            + f": {question}, per latency budget (GB/s = 10^9 bytes/s):",
            "",
        ]
        + rows
        + ["", "Its own account:", "", "```"]
        + advice.describe()
        + ["```"]
    )
