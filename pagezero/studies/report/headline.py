"""The extents study's findings first: the cache the run has, and which store clears fastest
in cache and beyond it against clear_pages()'s own kernel, as ratios, from the
kernels-by-extent table (nothing here measures; every figure is a cell of that table)."""

from pagezero.analysis.knee import TIE
from pagezero.studies.report.words import rate, ratio, span
from pagezero.units import format_size

TABLE = "kernels-by-extent table"


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
            f"No temporal kernel's rate falls from a cache level to a memory plateau over "
            f"the extents measured (up to {format_size(largest)}): {used} ({TABLE})."
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


def _kind(kernel, nontemporal):
    return "non-temporal" if kernel in nontemporal else "temporal"


def _answer(where, x, rates, clear_pages, nontemporal):
    """One answer: the fastest store at extent x against clear_pages()'s kernel, ties as ties."""
    here = {k: r[x] for k, r in rates.items() if r.get(x)}
    if clear_pages not in here:
        return None
    fastest = max(here, key=here.get)
    tied = sorted(k for k in here if k != fastest and here[k] >= (1 - TIE) * here[fastest])
    cp, best = here[clear_pages], here[fastest]
    at = f"{where}, {format_size(x)} extents"
    if fastest == clear_pages or clear_pages in tied:
        others = {k: v for k, v in here.items() if k != clear_pages}
        with_ties = f" (tied within {TIE:.0%} with {', '.join(tied)})" if tied else ""
        lead = (
            f"clear_pages()'s {clear_pages} clears fastest{with_ties}"
            if fastest == clear_pages
            else f"clear_pages()'s {clear_pages} ties with the fastest, {fastest} "
            f"(within {TIE:.0%}: {rate(cp)} vs {rate(best)} GB/s)"
        )
        if not others:
            return f"{at}: {lead} ({rate(cp)} GB/s; {TABLE})."
        other = max(others, key=others.get)
        return (
            f"{at}: {lead}; the fastest other store, {other} ({_kind(other, nontemporal)}), "
            f"clears {ratio(here[other] / cp)} as fast ({rate(here[other])} vs {rate(cp)} "
            f"GB/s; {TABLE})."
        )
    ties = f", tied within {TIE:.0%} with {', '.join(tied)}" if tied else ""
    return (
        f"{at}: {_kind(fastest, nontemporal)} stores ({fastest}{ties}) clear "
        f"{ratio(best / cp)} as fast as clear_pages()'s {clear_pages} here "
        f"({rate(best)} vs {rate(cp)} GB/s; {TABLE})."
    )


def headline_answers(table, xs, cache, clear_pages, nontemporal):
    """The answers: the fastest store in cache and beyond it against clear_pages()'s kernel.

    In cache: at the largest extent within the cache the studies use (cache.effective_bytes);
    beyond it: at the largest extent measured, from twice that cache. None is said where
    the table does not reach there, or the cache is unknown.
    """
    size = cache.effective_bytes
    if not size or not xs:
        return []
    rates = {f: {x: c["median"] for x, c in by_x.items()} for f, by_x in table.items()}
    which = "measured" if cache.source == "measured" else "sysfs's LLC"
    inside = [x for x in xs if x <= size]
    beyond = [x for x in xs if x >= 2 * size]
    answers = []
    if inside:
        where = f"In cache (up to {format_size(size)}, {which})"
        answers.append(_answer(where, max(inside), rates, clear_pages, nontemporal))
    if beyond:
        where = f"Beyond the cache ({format_size(size)}, {which})"
        answers.append(_answer(where, max(beyond), rates, clear_pages, nontemporal))
    return [a for a in answers if a]


def pages_by_extent(rs, backing_label):
    """{extent: the pages it was on, in words}: "4KB" where smaps saw no huge page of it."""
    shares = {}
    for r in rs.results:
        extent = int(r.params.get("chunk") or r.params["size"])
        share = (r.details or {}).get("huge_share")
        if share is not None:
            shares.setdefault(extent, []).append(share)
    out = {}
    for r in rs.results:
        extent = int(r.params.get("chunk") or r.params["size"])
        if extent not in shares:
            out[extent] = backing_label
        elif min(shares[extent]) >= 0.99:
            out[extent] = backing_label
        elif max(shares[extent]) == 0:
            out[extent] = "4KB"
        else:
            out[extent] = f"{backing_label} for {min(shares[extent]):.0%} of the buffer"
    return out


def pages_words(pages):
    """pages_by_extent() as a heading's words: "4KB pages for 4KB to 1MB, 2MB THP from 2MB"."""
    runs = []
    for x in sorted(pages):
        if runs and runs[-1][0] == pages[x]:
            runs[-1][2] = x
        else:
            runs.append([pages[x], x, x])
    if len(runs) == 1:
        return f"{runs[0][0]} pages"
    return ", ".join(f"{label} pages for {span(lo, hi)}" for label, lo, hi in runs)
