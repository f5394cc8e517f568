"""What the commands share on their command lines: the parser that fails in one line,
the number parsers, and every shared option, declared once with its help."""

import argparse
import os
import sys

from pagezero.studies.advise.study import SWEEPS as ADVISE_SWEEPS
from pagezero.studies.predict.study import FAULT_LOOPS, PAGES
from pagezero.system.backing import BACKINGS

__all__ = ["UsageError", "Parser", "integer", "number", "add", "add_format", "check_output", "pick"]


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes raise UsageError: one line, not the whole usage."""

    def error(self, message):
        raise UsageError(message)


def integer(text):
    """Every integer option's parser: decimal (leading zeros allowed) or 0x/0o/0b."""
    # Only the spelling: the range (loops >= 1, a node that exists) is the API's to
    # check, so that Python callers get the same rules.
    for base in (10, 0):
        try:
            return int(text, base)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"invalid integer {text!r}")


def number(text):
    """Every non-integer numeric option's parser (budgets in ms, thresholds)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None


def positive(text):
    """--runs: an integer of at least 1."""
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def fill_value(text):
    """memset's --value: a byte, or 'loop' for the loop index as perf writes it."""
    return text if text == "loop" else integer(text)


def _cold(text):
    return (
        f"hot: the same memory every loop, as perf (default); cold: {text} "
        "(clflushopt/clflush, elsewhere evict)"
    )


# Every shared option by its dest: its flags and settings.
OPTIONS = {
    "size": ("-s --size", dict(default="1GB")),
    "page": ("-p --page", dict(default="4KB")),
    "function": ("-f --function", dict(default="all")),
    "nr_loops": ("-l --nr_loops", dict(default=10, type=integer)),
    "cycles": ("-c --cycles", dict(action="store_true")),
    "clock": ("--clock", {}),
    "thp": ("--thp", dict(action="store_true")),
    "threads": ("-t --threads", dict(default=1, type=integer)),
    "cache": ("--cache", dict(default="hot", choices=["hot", "cold"])),
    "node": ("--node", dict(type=integer)),
    "cpu_node": ("--cpu-node", dict(type=integer)),
    "counters": ("--counters", dict(action="store_true")),
    "runs": ("--runs", dict(default=1, type=positive, metavar="N")),
    "kernel": ("--kernel", {}),
    "backing": ("--backing", dict(default="auto", choices=list(BACKINGS))),
    "reserve": ("--reserve", dict(action="store_true")),
    "quick": ("--quick", dict(action="store_true")),
    "quiet": ("-q --quiet", dict(action="store_true")),
    "no_reserve": ("--no-reserve", dict(action="store_false", dest="reserve")),
    "output": ("-o --output", dict(metavar="FILE.json")),
}

# Settings of a command's own, by (dest, command).
SETTINGS = {
    ("page", "folio"): dict(default="2MB"),
    ("page", "predict"): dict(default="2MB", choices=list(PAGES)),
    ("nr_loops", "predict"): dict(default=FAULT_LOOPS),
    ("runs", "predict"): dict(default=3),
    ("runs", "report"): dict(type=integer, default=None),
    ("reserve", "report"): dict(default=None),
    ("output", "predict"): dict(metavar="FILE"),
    ("output", "sweep"): dict(required=True),
    ("output", "plot"): dict(metavar="STEM"),
    ("output", "report"): dict(metavar="DIR"),
}

_UNITS = "units B, KB, MB, GB, TB, powers of 1024 (default: 1GB)"
_SAMPLE = "one sample each (default: 10)"

# Their help, once; by (dest, command) where the option means something of its own there.
HELP = {
    "size": f"bytes per loop; {_UNITS}",
    ("size", "mmap"): f"bytes each thread maps and faults per loop; {_UNITS}",
    ("size", "batch"): "region size, a whole number of 4KB pages (default: 1GB)",
    ("size", "predict"): "bytes faulted per loop, a whole number of pages (default: 1GB)",
    "page": "page size of the buffers: 4KB, 2MB or 1GB (default: 4KB)",
    ("page", "mmap"): "page size: 4KB, or 2MB / 1GB hugetlb (default: 4KB)",
    ("page", "folio"): "folio size: 2MB, 1GB or any power-of-two number of 4KB pages "
    "(default: 2MB)",
    ("page", "predict"): "the huge page size (default 2MB)",
    "function": "kernel to run, 'all' (default) or 'help' to list them",
    ("function", "mmap"): "workload: demand, populate, populate-write, 'all' (default) or 'help'",
    "nr_loops": f"timed loops over the whole size, {_SAMPLE}",
    ("nr_loops", "mmap"): f"timed map + fault loops, {_SAMPLE}",
    ("nr_loops", "folio"): "timed clears (default: 10)",
    ("nr_loops", "batch"): "timed passes over the region (default: 10)",
    ("nr_loops", "predict"): f"fault loops per run (default {FAULT_LOOPS})",
    "cycles": "count CPU cycles with perf_event_open, as perf's -c (needs a PMU)",
    "clock": "ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc",
    "thp": "ask for transparent huge pages on 4KB mappings (default: refuse them)",
    "threads": "threads, each pinned to its own CPU, started together (default: 1)",
    ("threads", "mmap"): "threads faulting their own regions at once (default: 1)",
    ("threads", "batch"): "threads, each pinned to its own CPU and clearing its own region of "
    "--size in batches, every pass started together (default: 1)",
    "cache": _cold("flush each chunk from the caches before its timed call, timing each chunk"),
    ("cache", "folio"): _cold(
        "flush the whole folio from the caches before each clear (after the scrub read), "
        "outside the timing"
    ),
    ("cache", "batch"): _cold(
        "flush each batch's range from the caches before it, outside the timing"
    ),
    "node": "bind the memory to this NUMA node (mbind) before its first touch",
    "cpu_node": "run the threads on this NUMA node's CPUs",
    "counters": "read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles and "
    "instructions around each timed pass (needs a PMU)",
    "runs": "measure in N fresh processes, one after the other, each with its own buffers "
    "and loops; prints the spread between runs (default: 1, this process)",
    ("runs", "predict"): "fresh processes for the faults and for the replays (default 3)",
    ("runs", "report"): "fresh processes per point, each cell the median of their medians "
    "(default 3; 1 with --quick)",
    "kernel": "clear kernel (default: clear_pages()'s)",
    ("kernel", "folio"): "clear kernel for cached stores (default: clear_pages()'s)",
    ("backing", "folio"): "a hugetlb page of the folio's size, THP (asked with MADV_HUGEPAGE, "
    "checked in smaps) or 4KB pages (THP refused); auto (default): a hugetlb page when one "
    "is free, else 2MB hugetlb pages, else THP, else 4KB pages with a line saying so",
    ("backing", "batch"): "the region's pages, standing for the kernel's direct map: 2MB "
    "hugetlb, THP (asked with MADV_HUGEPAGE, checked in smaps) or 4KB (THP refused); auto "
    "(default): hugetlb when enough 2MB pages are available, else THP, else 4KB with a "
    "line saying so",
    ("reserve", "mmap"): "grow the hugepage pool by what the run lacks, as root, and restore "
    "it afterwards",
    ("reserve", "predict"): "grow the hugepage pool by what the faults lack (root), giving it "
    "back afterwards",
    ("reserve", "report"): "reserve the 2MB and 1GB hugepages the fault and predict studies "
    "lack, around each, giving them back when it ends (also on a failure or a signal); the "
    "default as root; not root, a line says what root would run",
    "no_reserve": "keep the hugepage pools as they are: the fault and predict sizes lacking "
    "pages are skipped",
    "quiet": "no progress lines on stderr (by default a line per run or step with the time "
    "left, a bar on a terminal)",
    ("quiet", "report"): "no progress or hugepage lines on stderr (by default a line per "
    "study with the time left, a bar on a terminal; report.md still says what was reserved)",
    ("quick", "advise"): "a sweep of a few seconds in 1 run (smoke test, not a measurement; "
    f"the full sweep makes {ADVISE_SWEEPS['default']['runs']} runs, fresh processes)",
    ("quick", "report"): "a smaller study, one run per point: 30-90 s on a 2-core VM, the "
    "longer as root with the 2MB and 1GB fault sizes (the full report: about 13 min)",
    "output": "also save every result, with its samples and the machine, as JSON",
    ("output", "advise"): "also write the JSON advice",
    ("output", "predict"): "also save the prediction as JSON",
    ("output", "sweep"): None,
    ("output", "plot"): "default: the results file's name",
    ("output", "report"): "folder to write (default: pagezero-report-DATE-TIME)",
}


def add(p, *names):
    """Add the shared options `names` to p, with what they mean for its command."""
    command = p.prog.split()[-1]  # "pagezero mem mmap": mmap
    for name in names:
        flags, settings = OPTIONS[name]
        own = (name, command)
        help = HELP[own] if own in HELP else HELP[name]
        p.add_argument(*flags.split(), **{**settings, **SETTINGS.get(own, {})}, help=help)


def pick(args, *names, loops="nr_loops", **renamed):
    """The arguments `names` as a dict for an API call; renamed ones by key=dest."""
    renamed["loops"] = loops
    return {n: getattr(args, n) for n in names} | {k: getattr(args, d) for k, d in renamed.items()}


def _format_word(text):
    if text == "text":  # the analysis commands' old name for default
        print(
            "pagezero: warning: --format text is deprecated: use --format default", file=sys.stderr
        )
        return "default"
    return text


def add_format(p, formats, help=None):
    """--format: default (the text for people), simple (numbers only, a line a row), json."""
    p.add_argument(
        "--format", default="default", type=_format_word, choices=list(formats), help=help
    )


def check_output(path):
    """Refuse an unwritable output up front, not after minutes of measuring."""
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {path!r}: no directory {directory!r}")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path!r}: it is a directory (name a file in it)")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"cannot write {path!r}: directory {directory!r} is not writable")
