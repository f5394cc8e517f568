"""Reading a faults() Result: each thread's rate, their spread, and which pages the
kernel really gave (from the smaps counters the run read after each loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pagezero.results.summary import spread
from pagezero.units import format_page, format_size, parse_page

if TYPE_CHECKING:
    from pagezero.results.resultset import Result

__all__ = ["thread_rates", "thread_spread", "page_report"]


def thread_rates(result: Result) -> tuple[float, ...] | None:
    """Each thread's rate over all its loops.

    Parameters
    ----------
    result : Result
        A faults() Result (its details hold each thread's samples).

    Returns
    -------
    tuple of float or None
        One rate per thread, in bytes/sec (``inf`` for a thread whose samples
        sum to 0); None when the samples are cycles (no clock rate).
    """
    if result.clock_hz is None:
        return None
    size = result.params["size"]
    return tuple(
        size * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
        for s in result.details["thread_samples"]
    )


def thread_spread(result: Result) -> tuple[float, float] | tuple[None, None]:
    """The threads' mean rate and how far they spread.

    Parameters
    ----------
    result : Result
        A faults() Result measured with a clock (not cycles).

    Returns
    -------
    tuple of (float, float), or (None, None)
        The mean per-thread rate in bytes/sec, and its standard deviation
        across threads in % of that mean; (None, None) without per-thread
        rates (the cycles clock).
    """
    return spread(thread_rates(result) or ())  # None: no rates, as spread(()) says


def page_report(result: Result) -> dict[str, Any]:
    """Which pages the kernel really gave.

    From the smaps counters read after each loop; the loop that got the
    fewest huge pages counts.

    Parameters
    ----------
    result : Result
        A faults() Result (its details hold the per-loop page counters).

    Returns
    -------
    dict
        ``"asked"`` and ``"got"`` (str: the pages asked for and those given),
        ``"expected_bytes"``, ``"resident_bytes"``, ``"thp_bytes"`` and
        ``"hugetlb_bytes"`` (int, bytes), ``"fallback"`` (bool: True when the
        pages differ from those asked for, THP not granted or granted though
        refused) and ``"text"`` (str, one line saying all that).
    """
    params = result.params
    shift = parse_page(params["page"])
    expected = result.bytes_per_loop
    loops = result.details["pages"]
    worst = min(loops, key=lambda pg: (pg["anon_huge"] + pg["hugetlb"], pg["rss"]))
    resident = min(pg["rss"] + pg["hugetlb"] for pg in loops)
    thp_bytes = worst["anon_huge"]
    if shift != 12:
        asked = f"{format_page(shift)} hugetlb"
        got = f"{format_size(worst['kernel_page'])} hugetlb" if worst["kernel_page"] else "?"
        fallback = worst["kernel_page"] != 1 << shift
    else:
        asked = {True: "4KB with THP", False: "4KB (THP refused)", None: "4KB (system THP policy)"}[
            params["thp"]
        ]
        if thp_bytes == 0:
            got = "4KB"
        elif thp_bytes >= worst["rss"]:
            got = "2MB THP"
        else:
            got = f"2MB THP for {format_size(thp_bytes)}, 4KB for the rest"
        fallback = (params["thp"] is True and thp_bytes < expected) or (
            params["thp"] is False and thp_bytes > 0
        )
    text = f"asked {asked}, got {got}"
    if resident < expected:
        text += f"; only {format_size(resident)} of {format_size(expected)} resident"
    return {
        "asked": asked,
        "got": got,
        "expected_bytes": expected,
        "resident_bytes": resident,
        "thp_bytes": thp_bytes,
        "hugetlb_bytes": worst["hugetlb"],
        "fallback": fallback,
        "text": text,
    }
