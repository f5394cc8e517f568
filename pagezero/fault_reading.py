"""Reading a faults() Result: each thread's rate, their spread, and which pages the
kernel really gave (from the smaps counters the run read after each loop)."""

from .stats import spread
from .units import format_page, format_size, parse_page

__all__ = ["thread_rates", "thread_spread", "page_report"]


def thread_rates(result):
    """Each thread's rate in bytes/sec over all its loops (None for cycles)."""
    if result.clock_hz is None:
        return None
    size = result.params["size"]
    return tuple(
        size * len(s) * result.clock_hz / sum(s) if sum(s) else float("inf")
        for s in result.details["thread_samples"]
    )


def thread_spread(result):
    """(mean per-thread rate, its standard deviation across threads in %)."""
    return spread(thread_rates(result))


def page_report(result):
    """Which pages the kernel really gave, from the smaps counters read after
    each loop (the loop that got the fewest huge pages counts).

    Returns {"asked", "got", "expected_bytes", "resident_bytes", "thp_bytes",
    "hugetlb_bytes", "fallback", "text"}; fallback is True when the pages
    differ from those asked for (THP not granted, or granted though refused).
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
