"""What the commands share on their command lines: the parser that fails in one line,
the number parsers, and every shared option, declared once with its help."""

import argparse
import os
import sys

__all__ = ["UsageError", "Parser", "integer", "number", "add", "add_format", "check_output"]


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


def cold(text):
    """--cache's help, with what cold means for the command."""
    return (
        f"hot: the same memory every loop, as perf (default); cold: {text} "
        "(clflushopt/clflush, elsewhere evict)"
    )


_UNITS = "units B, KB, MB, GB, TB, powers of 1024 (default: 1GB)"
_THP = "ask for transparent huge pages on 4KB mappings (default: refuse them)"

# Each shared option by its dest: its flags and settings. A command gives another
# help (or other settings) where the option means something of its own there.
OPTIONS = {
    "size": (("-s", "--size"), dict(default="1GB", help=f"bytes per loop; {_UNITS}")),
    "page": (("-p", "--page"), dict(default="4KB")),
    "function": (("-f", "--function"), dict(default="all")),
    "nr_loops": (("-l", "--nr_loops"), dict(default=10, type=integer)),
    "cycles": (
        ("-c", "--cycles"),
        dict(
            action="store_true",
            help="count CPU cycles with perf_event_open, as perf's -c (needs a PMU)",
        ),
    ),
    "clock": (("--clock",), dict(help="ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc")),
    "thp": (("--thp",), dict(action="store_true", help=_THP)),
    "threads": (("-t", "--threads"), dict(default=1, type=integer)),
    "cache": (("--cache",), dict(default="hot", choices=["hot", "cold"])),
    "node": (
        ("--node",),
        dict(type=integer, help="bind the memory to this NUMA node (mbind) before its first touch"),
    ),
    "cpu_node": (
        ("--cpu-node",),
        dict(type=integer, help="run the threads on this NUMA node's CPUs"),
    ),
    "counters": (
        ("--counters",),
        dict(
            action="store_true",
            help="read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles and "
            "instructions around each timed pass (needs a PMU)",
        ),
    ),
    "runs": (
        ("--runs",),
        dict(
            default=1,
            type=positive,
            metavar="N",
            help="measure in N fresh processes, one after the other, each with its own "
            "buffers and loops; prints the spread between runs (default: 1, this process)",
        ),
    ),
    "kernel": (("--kernel",), dict(help="clear kernel (default: clear_pages()'s)")),
    "backing": (("--backing",), dict(default="auto")),  # choices: pagezero.system.backing
    "reserve": (("--reserve",), dict(action="store_true")),
    "quick": (("--quick",), dict(action="store_true")),
    "output": (
        ("-o", "--output"),
        dict(
            metavar="FILE.json",
            help="also save every result, with its samples and the machine, as JSON",
        ),
    ),
}


def add(p, *names, **changes):
    """Add the shared options `names` to p; changes[name]: its help, or a dict of settings."""
    for name in names:
        flags, settings = OPTIONS[name]
        change = changes.get(name, {})
        p.add_argument(
            *flags, **{**settings, **({"help": change} if isinstance(change, str) else change)}
        )


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
