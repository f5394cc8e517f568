"""The extents study (docs/studies/extents.rst): every clear kernel from 4KB to beyond the
cache; it sets the cache the run has in the machine() dict the later studies get."""

import itertools
from functools import partial

import pagezero.studies.report.words as words
from pagezero.analysis.cache import INFO_KEY, run_cache
from pagezero.analysis.knee import TIE
from pagezero.figures import extent_of, plot_rates
from pagezero.runs.sweeps import default_sizes
from pagezero.studies.advise.study import kernel_order
from pagezero.studies.cache import SMALL_REGION, cache_of, extend, settle_line, sweep_extents
from pagezero.studies.report.cells import Section, cells, finish
from pagezero.system.backing import Backing
from pagezero.system.kernels import clear_pages_kernel, kernels
from pagezero.units import format_size


def _tabulate(section, rs, backing, info):
    table = cells(rs, extent_of)
    xs = sorted({x for by_x in table.values() for x in by_x})
    cache = cache_of({f: {x: c["median"] for x, c in by.items()} for f, by in table.items()}, info)
    info[INFO_KEY] = cache.to_json()  # for the studies after this one
    llc, cache_text = cache.effective_bytes, cache.words()
    nontemporal = {k.name for k in kernels("clear") if not k.temporal}
    portable = {k.name for k in kernels("clear") if k.arch == "any"}
    rows = headline_rows(table, xs, cache, clear_pages_kernel(), portable)
    section.answers = [answer(r, nontemporal) for r in rows]
    section.text = headline_text(rows)
    order = kernel_order(kernels("clear"))
    fastest = words.fastest_lines(table, xs, llc, cache_text, order, clear_pages_kernel())
    section.summary = [cache_line(cache, xs[-1]), *fastest]
    pages = pages_by_extent(rs, backing.label)
    section.body = [
        f"Each kernel clears an extent in one call, repeatedly, on {pages_words(pages)} (the "
        f"kernel clears through its direct map's huge pages; a buffer under 2MB cannot be on a "
        f"2MB page); extents under {format_size(SMALL_REGION)} are cleared in extent-sized "
        f"calls over a {format_size(SMALL_REGION)} region so the timing clock does not "
        f"count. Up to the cache, {cache_text}, the buffer is hot; beyond it, each loop streams "
        f"through memory. {words.runs_line(rs)} GB/s:",
        "",
        *([f"Pages: {backing.note}.", ""] if backing.note else []),
        *([settled, ""] if (settled := settle_line(rs)) else []),
        *words.markdown_table(table, xs, "extent", llc, pages),
        "",
        "![rate by extent](extents.png)",
    ]
    if rows:
        section.body += [
            "",
            "The headline table: clear_pages()'s kernel on this CPU against the fastest "
            "other store, at the largest extent in cache and the largest beyond it (GB/s):",
            "",
            *headline_table(rows),
        ]


def study_extents(out_dir, cfg, info, functions, progress):
    """Which kernel clears fastest where: rates per kernel and extent, and the sentences."""
    notes = []
    extents = cfg["extents"] or default_sizes(info)
    rs, backing = sweep_extents(extents, functions, cfg["runs"], progress, notes)
    if cfg.get("extend_extents"):
        rs = extend(rs, functions, info, cfg["runs"], progress, notes)
    section = Section("Kernels by extent", interrupted=rs.interrupted)
    title = f"Clearing rate by extent (memset, each kernel, {backing.label} pages)"
    tabulate = partial(_tabulate, section, rs, backing=backing, info=info)
    plot = partial(_plot, info=info)
    return finish(section, out_dir, "extents", rs, tabulate, plot=plot, notes=notes, title=title)


def _plot(rs, stem, info, **figure):
    """plot_rates() with the measured cache marked where it differs from sysfs's LLC."""
    return plot_rates(rs, stem, cache_bytes=run_cache(info).measured_instead_of_llc, **figure)


TABLE = "extents table"


def cache_line(cache, largest):
    """The summary's sentence on the cache the run has (a MeasuredCache), and which is used."""
    llc = "none" if not cache.llc_bytes else format_size(cache.llc_bytes)
    where = f"sysfs's LLC ({llc}" + (f", {cache.llc_source})" if cache.llc_source else ")")
    if cache.cache_bytes is None:
        used = (
            f'"in cache" here means up to sysfs\'s LLC ({llc})'
            if cache.llc_bytes
            else 'no cache size is known, so no extent is called "in cache"'
        )
        return (
            f"The temporal kernels' rates show no cache (fewer than half of them fall from a "
            f"cache level to a memory plateau over the extents measured, up to "
            f"{format_size(largest)}): {used} ({TABLE})."
        )
    fall = (
        f"the temporal kernels clear at cache speed up to {format_size(cache.cache_bytes)} "
        f"and at the memory plateau from {format_size(cache.plateau_bytes)}"
    )
    if cache.source == "measured":
        return (
            f"The cache this run has is {format_size(cache.cache_bytes)}, measured, not "
            f'{where}: {fall} ({TABLE}); "in cache" and "beyond the cache" here '
            f"mean the measured {format_size(cache.cache_bytes)}."
        )
    return f"The cache this run has agrees with {where}: {fall} ({TABLE})."


def headline_rows(table, xs, cache, clear_pages, portable=()):
    """In cache and beyond: clear_pages()'s kernel against the fastest non-`portable` store."""
    size = cache.effective_bytes
    if not size or not xs:
        return []
    rates = {
        f: {x: c["median"] for x, c in by_x.items()}
        for f, by_x in table.items()
        if f not in portable
    }
    source = "measured" if cache.source == "measured" else "sysfs's LLC"
    cache_words = f"{format_size(size)}, {source}"
    # Without a measured fall, sysfs's size alone: the rates start to fall well before it where
    # the L3 is shared (a Zen 4 VM's 32 MiB: at full speed to 8-16MB), so a quarter of it.
    at_speed = cache.cache_bytes if cache.cache_bytes and cache.cache_bytes <= size else size // 4
    inside = [x for x in xs if x <= at_speed]
    beyond = [x for x in xs if x >= 2 * size]
    rows = []
    for where, group in (("in cache", inside), ("beyond the cache", beyond)):
        if not group:
            continue
        x = max(group)
        here = {k: r[x] for k, r in rates.items() if r.get(x)}
        others = {k: v for k, v in here.items() if k != clear_pages}
        if clear_pages not in here or not others:
            continue
        fastest = max(here, key=here.get)
        other = max(others, key=others.get)
        tied = sorted(k for k in here if k != fastest and here[k] >= (1 - TIE) * here[fastest])
        row = dict(where=where, cache=cache_words, extent=x, clear_pages=clear_pages)
        row |= dict(clear_pages_rate=here[clear_pages], other=other, other_rate=here[other])
        rows.append(row | dict(fastest=fastest, tied=tied))
    return rows


def _cells(r):
    """A headline row's cells: where, extent, the two kernels and rates, their ratio."""
    mine, other = r["clear_pages_rate"], r["other_rate"]
    cells = [r["where"], format_size(r["extent"]), r["clear_pages"], words.rate(mine)]
    return cells + [r["other"], words.rate(other), words.ratio(other / mine)]


def headline_table(rows):
    """The headline table (markdown lines) of headline_rows(); [] when none."""
    header = ["where", "extent", "clear_pages()'s kernel", "GB/s", "fastest other store"]
    cells = [[f"{r['where']} ({r['cache']})", *_cells(r)[1:]] for r in rows]
    return words.md_table([*header, "GB/s", "other / clear_pages()"], cells) if rows else []


def headline_text(rows):
    """summary.txt's table of headline_rows(): the same cells, narrow enough for a mail."""
    header = ["", "extent", "clear_pages()", "GB/s", "fastest other", "GB/s", "ratio"]
    cells = [[r["where"].replace(" the cache", ""), *_cells(r)[1:]] for r in rows]
    return words.text_table(header, cells) if rows else []


def answer(row, nontemporal):
    """One headline row as the summary's answer, its figure first: which store clears fastest."""
    cp, other = row["clear_pages"], row["other"]
    c, o = words.rate(row["clear_pages_rate"]), words.rate(row["other_rate"])
    times = words.ratio(row["other_rate"] / row["clear_pages_rate"])
    at = f"{row['where']}, {format_size(row['extent'])} extents"
    kind = "non-temporal" if other in nontemporal else "temporal"
    if row["fastest"] == cp:
        ties = f", {words.tied_with(row['tied'])}" if row["tied"] else ""
        return (
            f"{c} GB/s {at}: clear_pages()'s {cp} clears fastest{ties}; the fastest other "
            f"store, {kind} {other}, {o} GB/s ({times}) ({TABLE})."
        )
    if cp in row["tied"]:
        return (
            f"{c} GB/s {at}: clear_pages()'s {cp} ties with the fastest, {kind} {other} "
            f"({o} GB/s, {times}) ({TABLE})."
        )
    ties = f" ({words.tied_with(row['tied'])})" if row["tied"] else ""
    return (
        f"{times} {at}: {kind} {other}{ties} clears at {o} GB/s, clear_pages()'s {cp} at "
        f"{c} GB/s ({TABLE})."
    )


def pages_by_extent(rs, backing_label):
    """{extent: its pages in words}; `backing_label` where a result's params do not say."""
    labels, shares = {}, {}
    for r in rs.results:
        extent = int(r.params.get("chunk") or r.params["size"])
        if "page" in r.params:
            labels[extent] = Backing.of(r.params["page"], r.params.get("thp")).label
        seen = shares.setdefault(extent, [])
        if (r.details or {}).get("huge_share") is not None:
            seen.append(r.details["huge_share"])
    out = {}
    for extent, seen in shares.items():
        label = labels.get(extent, backing_label)
        if not seen or min(seen) >= 0.99:
            out[extent] = label
        else:
            out[extent] = "4KB" if max(seen) == 0 else f"{label} for {min(seen):.0%} of the buffer"
    return out


def pages_words(pages):
    """pages_by_extent() in words: "4KB pages for 4KB to 1MB, 2MB THP pages for 2MB"."""
    runs = [(label, list(xs)) for label, xs in itertools.groupby(sorted(pages), key=pages.get)]
    if len(runs) == 1:
        return f"{runs[0][0]} pages"
    return ", ".join(f"{label} pages for {words.span(xs[0], xs[-1])}" for label, xs in runs)
