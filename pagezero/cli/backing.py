"""The pages under batch and folio tables (pagezero.system.backing): the words for
a table heading, the JSON row fields, and the lines for stderr (why not
hugetlb; a THP buffer short of huge pages)."""

import math

from pagezero.system.backing import Backing, thp_warning

__all__ = ["backing_heading", "backing_row", "backing_lines"]


def _label(result):
    return Backing(result.params.get("backing", "4KB")).label


def _share(result):
    share = result.details.get("huge_share")
    # Rounded down, as thp_warning: 99.9% is not "100%".
    return None if share is None else f"{math.floor(share * 100)}% on huge pages per smaps"


def backing_heading(results):
    """E.g. "2MB THP pages, 100% on huge pages per smaps" or "4KB pages": the
    pages every result cleared; several labels when runs got different ones.

    Parameters
    ----------
    results : sequence of pagezero.Result
        batch or folio results (``params["backing"]``).

    Returns
    -------
    str
    """
    parts = []
    for r in results:
        share = _share(r)
        text = f"{_label(r)} pages" + (f", {share}" if share else "")
        if text not in parts:
            parts.append(text)
    return "; ".join(parts)


def backing_row(result):
    """The JSON row's backing and, for THP, huge_share.

    Parameters
    ----------
    result : pagezero.Result
        A batch or folio result.

    Returns
    -------
    dict
        ``backing`` and, for THP, ``huge_share`` (a fraction).
    """
    row = {"backing": result.params.get("backing", "4KB")}
    if "huge_share" in result.details:
        row["huge_share"] = result.details["huge_share"]
    return row


def backing_lines(results, name):
    """Lines for stderr: each distinct note on why the pages are not hugetlb
    ("# ..."), and a warning per result whose THP share is short
    (`name(result)` names the result in it).

    Parameters
    ----------
    results : sequence of pagezero.Result
        batch or folio results.
    name : callable
        A result's name in a warning.

    Returns
    -------
    list of str
    """
    lines = []
    for r in results:
        note = r.details.get("backing_note")
        if note and f"# pages: {note}" not in lines:
            lines.append(f"# pages: {note}")
    for r in results:
        if "huge_share" in r.details:
            warning = thp_warning(r.details["huge_share"], r.details["buffer_bytes"])
            if warning:
                lines.append(f"pagezero: warning: {name(r)}: {warning}")
    return lines
