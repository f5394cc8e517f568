"""The command lines' parts: the parser that fails in one line, the number parsers, and
every option, declared once with its help (per command where it differs), added by name."""

import argparse
import sys

from pagezero.files import writable_parent
from pagezero.measure.policy import PRESETS, STRATEGIES
from pagezero.runs.sweeps import BENCHMARKS
from pagezero.studies.advise.study import DEFAULT_BUDGETS_MS
from pagezero.studies.advise.study import SWEEPS as ADVISE_SWEEPS
from pagezero.studies.predict.study import FAULT_LOOPS, PAGES
from pagezero.system.backing import BACKINGS


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes raise UsageError: one line, not the whole usage."""

    def error(self, message):
        raise UsageError(message)


def integer(text):
    """Every integer option's parser: decimal (leading zeros allowed) or 0x/0o/0b."""
    # Only the spelling: ranges (loops >= 1, a node that exists) are the API's, as for callers.
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


def _format_word(text):
    if text == "text":  # the analysis commands' old name for default
        warning = "pagezero: warning: --format text is deprecated: use --format default"
        print(warning, file=sys.stderr)
        return "default"
    return text


_FORMATS = ["default", "simple", "json"]
_JSON_ONLY = ("info", "advise", "store-list", "store-history", "fleet-table")

# Every option by its name (its dest, but for the formats): its flags and settings.
OPTIONS = {
    "size": ("-s --size", dict(default="1GB")),
    "page": ("-p --page", dict(default="4KB")),
    "chunk": ("-k --chunk", dict(default="0")),
    "function": ("-f --function", dict(default="all")),
    "nr_loops": ("-l --nr_loops", dict(default=10, type=integer)),
    "cycles": ("-c --cycles", dict(action="store_true")),
    "clock": ("--clock", {}),
    "value": ("--value", dict(default=0, type=fill_value)),
    "settle": ("--settle", dict(default=0, type=integer, metavar="N")),
    "thp": ("--thp", dict(action="store_true")),
    "offset": ("--offset", dict(default=0, type=integer, metavar="BYTES")),
    "randomize": ("-r --randomize", dict(default=0, type=integer, metavar="SEED")),
    "threads": ("-t --threads", dict(default=1, type=integer)),
    "touch": ("--touch", dict(default="perf", choices=("perf", "write"))),
    "latency": ("--latency", dict(action="store_true")),
    "headroom": ("--headroom", dict(action="store_true")),
    "profile": ("--profile", dict(action="store_true")),
    "cache": ("--cache", dict(default="hot", choices=["hot", "cold"])),
    "node": ("--node", dict(type=integer)),
    "cpu_node": ("--cpu-node", dict(type=integer)),
    "counters": ("--counters", dict(action="store_true")),
    "threads_mode": ("--threads-mode", dict(default="shared", choices=["shared", "private"])),
    "runs": ("--runs", dict(default=1, type=positive, metavar="N")),
    "strategy": ("--strategy", dict(default="all", choices=[*STRATEGIES, "all"])),
    "fault_index": ("--fault-index", dict(default=0, type=integer)),
    "kernel": ("--kernel", {}),
    "nt_kernel": ("--nt-kernel", {}),
    "batch": ("-b --batch", dict(default="32MB")),
    "yield_between": ("--yield", dict(dest="yield_between", action="store_true")),
    "backing": ("--backing", dict(default="auto", choices=list(BACKINGS))),
    "cold": ("--cold", dict(default="auto", choices=["auto", "clflush", "evict"])),
    "budget": ("--budget", dict(action="append", metavar="MS", type=number)),
    "explain": ("--explain", dict(action="store_true")),
    "measure": ("--measure", dict(action="store_true")),
    "kind": ("--kind", dict(default="all", choices=["clear", "copy", "all"])),
    "benchmark": ("benchmark", dict(choices=sorted(BENCHMARKS))),
    "param": ("-g --param", dict(action="append", metavar="NAME=V1,V2")),
    "grid": ("--grid", dict(metavar="FILE")),
    "repeat": ("-r --repeat", dict(type=integer, default=3)),
    "warmup": ("--warmup", dict(type=integer, default=1)),
    "processes": ("--processes", dict(type=integer, default=1)),
    "csv": ("--csv", dict(metavar="FILE.csv")),
    "results": ("results", dict(metavar="RESULTS.json")),
    "x": ("--x", dict(default="extent", choices=["extent", "chunk", "size"])),
    "reserve": ("--reserve", dict(action="store_true")),
    "quick": ("--quick", dict(action="store_true")),
    "quiet": ("-q --quiet", dict(action="store_true")),
    "no_reserve": ("--no-reserve", dict(action="store_false", dest="reserve")),
    "output": ("-o --output", dict(metavar="FILE.json")),
    "threshold": ("--threshold", dict(type=number, default=2.0)),
    "alpha": ("--alpha", dict(type=number, default=0.01)),
    "plot": ("--plot", dict(metavar="STEM")),
    "by": ("--by", dict(default="file", choices=["file", "function"])),
    "base": ("--base", dict(metavar="FUNCTION")),
    # --format: default (the text for people), simple (numbers only, a line a row), json.
    "format": ("--format", dict(default="default", type=_format_word, choices=_FORMATS)),
}

# Settings of a command's own, by (name, command).
SETTINGS = {
    ("page", "folio"): dict(default="2MB"),
    ("page", "predict"): dict(default="2MB", choices=list(PAGES)),
    ("nr_loops", "predict"): dict(default=FAULT_LOOPS),
    ("batch", "batch"): dict(action="append", default=None),
    ("runs", "predict"): dict(default=3),
    ("runs", "report"): dict(type=integer, default=None),
    ("reserve", "report"): dict(default=None),
    ("output", "predict"): dict(metavar="FILE"),
    ("output", "sweep"): dict(required=True),
    ("output", "plot"): dict(metavar="STEM"),
    ("output", "report"): dict(metavar="DIR"),
    ("results", "compare"): dict(nargs="+", metavar="RESULTS.json|DIR"),
    # compare's --format text is a format of its own, not the deprecated name of default.
    ("format", "compare"): dict(type=None, choices=["default", "text", "simple", "json"]),
    **{("format", c): dict(choices=["default", "simple"]) for c in ("memset", "memcpy", "mmap")},
    **{("format", c): dict(choices=["default", "json"]) for c in _JSON_ONLY},
}

_UNITS = "units B, KB, MB, GB, TB, powers of 1024 (default: 1GB)"
_SAMPLE = "one sample each (default: 10)"
_SIMPLE = "default: perf's text; simple: only the number"
_PRESETS = ", ".join(PRESETS)
_HOT = "hot: the same memory every loop, as perf (default); cold: "
_FLUSH = ", untimed (clflushopt/clflush, elsewhere evict)"
_THP = "THP (MADV_HUGEPAGE, checked in smaps) or 4KB (THP refused)"

# Their help, once (none for some); by (name, command) where it is of its own there.
HELP: dict[str | tuple[str, str], str | None] = {
    "size": f"bytes per loop; {_UNITS}",
    ("size", "mmap"): f"bytes each thread maps and faults per loop; {_UNITS}",
    ("size", "batch"): "region size, a whole number of 4KB pages (default: 1GB)",
    ("size", "predict"): "bytes faulted per loop, a whole number of pages, at least twice the "
    "LLC (default: 1GB)",
    "page": "page size of the buffers: 4KB, 2MB or 1GB (default: 4KB)",
    ("page", "mmap"): "page size: 4KB, or 2MB / 1GB hugetlb (default: 4KB)",
    ("page", "folio"): "folio size: 2MB, 1GB or a power of two of 4KB pages (default: 2MB)",
    ("page", "predict"): "the huge page size (default 2MB)",
    "chunk": "bytes per kernel call; 0 means the whole extent (default: 0)",
    "function": "kernel to run, 'all' (default) or 'help' to list them",
    ("function", "mmap"): "workload: demand, populate, populate-write, 'all' (default) or 'help'",
    "nr_loops": f"timed loops over the whole size, {_SAMPLE}",
    ("nr_loops", "mmap"): f"timed map + fault loops, {_SAMPLE}",
    ("nr_loops", "folio"): "timed clears (default: 10)",
    ("nr_loops", "batch"): "timed passes over the region (default: 10)",
    ("nr_loops", "predict"): f"fault loops per run (default {FAULT_LOOPS})",
    "cycles": "count CPU cycles with perf_event_open, as perf's -c (needs a PMU)",
    "clock": "ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc",
    "value": "fill byte 0..255 (default 0), or 'loop' to write the loop index as perf does",
    "settle": "up to N untimed loops first, until two in a row agree within 5%% (default 0)",
    "thp": "ask for transparent huge pages on 4KB mappings (default: refuse them)",
    "offset": "start the buffers BYTES past a page boundary (default 0, as perf since it "
    "mmap()s them; 16 reproduces perf 6.1's malloc()ed buffers)",
    "randomize": "demand: write a random byte of each page, drawn as rand() after "
    "srand(SEED + thread) (default: 0, byte 0 of each page)",
    "threads": "threads, each pinned to its own CPU, started together (default: 1)",
    ("threads", "mmap"): "threads faulting their own regions at once (default: 1)",
    ("threads", "batch"): "threads, each on its own CPU clearing a --size region (default: 1)",
    "touch": "perf: each page's byte read then written, as perf, after every workload "
    "(default); write: demand writes one byte per page, the studies' write fault",
    "latency": "also time each fault (groups of 16 for 4KB pages): p50, p99, max",
    "headroom": "then clear the same extents with every clear kernel: how much faster the best is",
    "profile": "sample the timed faults (perf events, /proc/kallsyms) and print the kernel's "
    "clearing share, its routine and the rest of the fault by group",
    "cache": f"{_HOT}flush each chunk before its timed call{_FLUSH}",
    ("cache", "folio"): f"{_HOT}flush the folio before each clear (after the scrub read){_FLUSH}",
    ("cache", "batch"): f"{_HOT}flush each batch's range before it{_FLUSH}",
    "node": "bind the memory to this NUMA node (mbind) before its first touch",
    "cpu_node": "run the threads on this NUMA node's CPUs",
    "counters": "read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles and "
    "instructions around each timed pass (needs a PMU)",
    "threads_mode": "shared: disjoint parts of one region (default); private: --size each",
    "runs": "measure in N fresh processes, one after the other, each with its own buffers "
    "and loops; prints the spread between runs (default: 1, this process)",
    ("runs", "fleet-run"): "fresh processes per machine, one after the other (default 1)",
    ("runs", "predict"): "fresh processes for the faults, for the sampled faults and for the "
    "replays (default 3)",
    ("runs", "report"): "processes per point; a cell their medians' median (default 3; --quick 1)",
    "strategy": "clearing order (default: all)",
    "fault_index": "the faulting page, 0-based (default: 0, the common case)",
    "kernel": "clear kernel (default: clear_pages()'s)",
    ("kernel", "folio"): "clear kernel for cached stores (default: clear_pages()'s)",
    "nt_kernel": "non-temporal kernel for nocache-except-target (default: the first available)",
    "batch": f"most clear_pages() clears at once: a size or a preset ({_PRESETS}) (default: 32MB)",
    ("batch", "batch"): f"a size or a preset ({_PRESETS}); repeatable (default: every preset)",
    "yield_between": "sched_yield() after each batch, as cond_resched()",
    ("backing", "folio"): f"a hugetlb page of the folio's size, {_THP}; auto (default): "
    "such a page if free, else 2MB hugetlb, else THP, else 4KB, with a line",
    ("backing", "batch"): f"the pages standing for the kernel's direct map: 2MB hugetlb, {_THP}; "
    "auto (default): hugetlb if enough 2MB pages are free, else THP, else 4KB, with a line",
    "cold": "how the cold baseline evicts the neighbourhood (default: clflush if the CPU has it)",
    "budget": "latency budget in ms for the worst batch in 9 visits of 10 (per visit the "
    "slowest batch position, median over its passes); repeat for several (default: "
    f"{' and '.join(f'{b:g}' for b in DEFAULT_BUDGETS_MS)})",
    "explain": "after the answers, say how ties were judged and chosen and budgets checked",
    "measure": "also measure the cache a run has (3 runs, about 30 s), beside sysfs's LLC",
    "param": "a grid axis, e.g. -g function=x86-64-stosb,default -g chunk=4KB,2MB",
    "grid": "grid from a JSON or TOML file: name = [values]",
    "repeat": "repetitions (default 3)",
    "warmup": "warm-up passes thrown away (default 1)",
    "processes": "spread repetitions over this many fresh processes (default 1)",
    "csv": "also write the tidy table as CSV",
    ("reserve", "mmap"): "grow the hugepage pool by what the run lacks (root), restored after",
    ("reserve", "predict"): "grow the hugepage pool by what the faults lack (root), restored after",
    ("reserve", "report"): "reserve the 2MB and 1GB hugepages the fault and predict studies lack, "
    "given back after each (a failure or signal too); default as root, else a line says how",
    "no_reserve": "keep the hugepage pools: fault and predict sizes lacking pages are skipped",
    "quiet": "no progress lines on stderr (a line per run or step, time left, a bar on a tty)",
    ("quiet", "fleet-run"): "no progress lines on stderr (a line per run begun or done, time left)",
    ("quiet", "report"): "no progress or hugepage lines on stderr (report.md says what's reserved)",
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
    **{("format", c): _SIMPLE for c in ("memset", "memcpy", "mmap")},
    ("format", "kernels"): "simple: the names of the kernels this machine can run, one a line",
    ("format", "folio"): "simple: 'rate touch_ns_per_line cold_ns_per_line' per strategy",
    ("format", "batch"): "simple: 'rate worst_ms p99_ms' per batch",
    ("format", "compare"): "simple: per point, the base's median of per-run medians and each "
    "other's change of it in percent; text: the table in 80 columns, to paste in a patch mail "
    "or review reply",
    "threshold": "smallest change worth flagging, in percent (default 2)",
    "alpha": "significance level of the test on the runs' medians (default 0.01)",
    "plot": "also draw STEM.png and STEM.svg",
    "by": "file: each file or folder a side, against the first (default); function: the "
    "functions (kernels, workloads) of all of them side by side, against --base",
    "base": "with --by function: the base function (default: the first in the kernel table)",
}


def add(p, names):
    """Add the options `names` (space-separated) to p, with what they mean for its command."""
    command = p.get_default("command")
    for name in names.split():
        flags, settings = OPTIONS[name]
        own = (name, command)
        help = HELP[own] if own in HELP else HELP.get(name)
        p.add_argument(*flags.split(), **{**settings, **SETTINGS.get(own, {})}, help=help)


def command(sub, name, text, run=None, options="", **defaults):
    """A command's parser with `options` (by name); main() runs run(args) for it."""
    p = sub.add_parser(name, help=text, description=text)
    p.set_defaults(**{"command": name, "run": run} | defaults)
    add(p, options)
    return p


def pick(args, names, loops="nr_loops", **renamed):
    """The arguments `names` (space-separated) as a dict for an API call; renamed by key=dest."""
    renamed["loops"] = loops
    picked = {n: getattr(args, n) for n in names.split()}
    return picked | {k: getattr(args, d) for k, d in renamed.items()}


def check_output(path):
    """Refuse an unwritable output up front, not after minutes of measuring."""
    if path is None:
        return
    writable_parent(path)
