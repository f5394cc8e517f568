"""What the commands share on their command lines: the parser that fails in one
line, the one integer parser, and the option groups (clock, output, conditions,
format)."""

import argparse
import os
import sys

__all__ = [
    "UsageError",
    "Parser",
    "integer",
    "number",
    "fill_value",
    "add_clock",
    "resolve_clock",
    "add_output",
    "check_output",
    "add_conditions",
    "add_format",
    "FORMATS",
]


class UsageError(Exception):
    """A command-line mistake: exit status 2."""


class Parser(argparse.ArgumentParser):
    """The argument parser of every command: a mistake raises :class:`UsageError`
    (one line, exit status 2) instead of printing the whole usage.
    """

    # argparse prints the whole usage before its error; one line is enough.
    def error(self, message):
        """Raise the mistake as :class:`UsageError` instead of exiting.

        Parameters
        ----------
        message : str
            argparse's description of the mistake.

        Raises
        ------
        UsageError
            Always.
        """
        raise UsageError(message)


def integer(text):
    """Every integer option's parser: decimal (leading zeros allowed) or 0x/0o/0b.

    Only the spelling is checked here; the range (loops >= 1, a node that
    exists) is the API's to check, so that Python callers get the same rules.
    argparse names the option: "argument -l/--nr_loops: invalid integer 'x'".

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    int

    Raises
    ------
    argparse.ArgumentTypeError
        Not an integer in any of those spellings.
    """
    for base in (10, 0):
        try:
            return int(text, base)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"invalid integer {text!r}")


def number(text):
    """Every non-integer numeric option's parser (budgets in ms, thresholds).

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    float

    Raises
    ------
    argparse.ArgumentTypeError
        Not a number.
    """
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None


def fill_value(text):
    """memset's --value: an integer, or 'loop' for the loop index as perf writes it.

    Parameters
    ----------
    text : str
        The option's value as typed.

    Returns
    -------
    int or str
        The byte value, or ``"loop"``.

    Raises
    ------
    argparse.ArgumentTypeError
        Neither an integer nor ``loop``.
    """
    return text if text == "loop" else integer(text)


def add_clock(p):
    """Add ``-c/--cycles`` (perf's) and ``--clock ns|timeval|cycles|tsc``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    """
    p.add_argument(
        "-c",
        "--cycles",
        action="store_true",
        help="count CPU cycles with perf_event_open, as perf's -c (needs a PMU)",
    )
    p.add_argument(
        "--clock", default=None, help="ns (CLOCK_MONOTONIC_RAW, default), timeval, cycles or tsc"
    )


def resolve_clock(args):
    """-c is perf's spelling of --clock cycles; the default clock is ns.

    Sets ``args.clock`` in place.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``cycles``, ``clock``).

    Raises
    ------
    UsageError
        ``-c`` with another ``--clock`` (exit status 2).
    """
    if args.cycles:
        if args.clock not in (None, "cycles"):
            raise UsageError(f"-c/--cycles and --clock {args.clock} contradict each other")
        args.clock = "cycles"
    args.clock = args.clock or "ns"


def add_output(
    p,
    help="also save every result, with its samples and the machine, as JSON",
    metavar="FILE.json",
    **kw,
):
    """Add ``-o/--output``: where to save the results as JSON.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    help, metavar : str
        The option's help text and placeholder.
    **kw
        Passed on to :meth:`argparse.ArgumentParser.add_argument`.
    """
    p.add_argument("-o", "--output", metavar=metavar, help=help, **kw)


def check_output(path):
    """Refuse an output in a missing directory up front, not after minutes of measuring.

    Parameters
    ----------
    path : str or None
        The output file (or a plot's stem); None for none.

    Raises
    ------
    UsageError
        Its folder is missing or not writable, or the path is a folder (exit status 2).
    """
    if path is None:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise UsageError(f"cannot write {path!r}: no directory {directory!r}")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path!r}: it is a directory (name a file in it)")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"cannot write {path!r}: directory {directory!r} is not writable")


COUNTERS_HELP = (
    "read L1-dcache-loads, L1-dcache-load-misses, LLC-load-misses, cycles and "
    "instructions around each timed pass (needs a PMU)"
)


def add_conditions(p, cold_text, threads_text=None, cpu_node=False):
    """The measured conditions: --cache, --node, --counters, and where the command
    has them, -t/--threads and --cpu-node.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    cold_text : str
        ``--cache``'s help: what cold means for this command.
    threads_text : str, optional
        ``-t/--threads``' help; without it the command has no threads option.
    cpu_node : bool
        Whether the command has ``--cpu-node``.
    """
    p.add_argument(
        "--cache",
        default="hot",
        choices=["hot", "cold"],
        help=f"hot: the same memory every loop, as perf (default); cold: "
        f"{cold_text} (clflushopt/clflush, elsewhere evict)",
    )
    if threads_text:
        p.add_argument("-t", "--threads", default=1, type=integer, help=threads_text)
    p.add_argument(
        "--node",
        default=None,
        type=integer,
        help="bind the memory to this NUMA node (mbind) before its first touch",
    )
    if cpu_node:
        p.add_argument(
            "--cpu-node",
            default=None,
            type=integer,
            help="run the threads on this NUMA node's CPUs",
        )
    p.add_argument("--counters", action="store_true", help=COUNTERS_HELP)


# The one --format vocabulary: default (the text for people), simple (only the
# numbers, one line per row), json. A command offers those that make sense for
# what it prints.
FORMATS = ("default", "simple", "json")


def _format_word(text):
    if text == "text":
        # The analysis commands' old name for default.
        print(
            "pagezero: warning: --format text is deprecated: use --format default", file=sys.stderr
        )
        return "default"
    return text


def add_format(p, formats, help=None):
    """Add ``--format`` with the given choices (default ``default``).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    formats : sequence of str
        The formats the command prints, a subset of ``default``, ``simple``,
        ``json`` and ``csv``.
    help : str, optional
        The option's help text.
    """
    assert set(formats) <= set(FORMATS), formats
    p.add_argument(
        "--format", default="default", type=_format_word, choices=list(formats), help=help
    )
