"""The pagezero command a fleet runs, checked on the client before anything is sent.

The command is parsed by pagezero's own argument parser, as if it were run
here, without running it: a mistake is one line on the client instead of
one error per machine. Only commands that write results with -o qualify; the
fleet gives each run its own -o on the worker.
"""

import contextlib
import io
import shlex

from pagezero.units import parse_page, parse_size

__all__ = ["check_command", "FILE_COMMANDS", "FOLDER_COMMANDS"]

# Commands whose -o is a results file, and those whose -o is a folder of them.
FILE_COMMANDS = ("memset", "memcpy", "mmap", "batch", "folio", "sweep")
FOLDER_COMMANDS = ("report",)

_PLACEHOLDER = "/nonexistent/pagezero-fleet-output"


def _names_output(argv):
    return any(
        t in ("-o", "--output")
        or t.startswith("--output=")
        or (t.startswith("-o") and not t.startswith("--"))
        for t in argv
    )


def parse_command(argv):
    """Parse a command as pagezero would, without running it.

    Parameters
    ----------
    argv : list of str
        The command, without ``pagezero``.

    Returns
    -------
    argparse.Namespace

    Raises
    ------
    ValueError
        If pagezero would refuse it (the parser's message), or if it asks for help.
    """
    from pagezero.cli import UsageError, build_parser

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # -h would print the help
            return build_parser().parse_args(argv)
    except UsageError as e:
        raise ValueError(f"pagezero would refuse '{shlex.join(argv)}': {e}") from None
    except SystemExit:
        raise ValueError(f"'{shlex.join(argv)}' prints help and measures nothing") from None


def check_command(argv):
    """Check a command a fleet is asked to run.

    Parameters
    ----------
    argv : list of str
        The command, optionally after ``--`` and ``pagezero``.

    Returns
    -------
    tuple
        ``(argv, "file" or "folder")``: the command without a leading ``--`` or
        ``pagezero``, and what its ``-o`` writes.

    Raises
    ------
    ValueError
        For anything a fleet cannot run: a command pagezero refuses, one without
        results to save, or one that names its own ``-o``.
    """
    argv = [str(a) for a in argv]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if argv[:1] == ["pagezero"]:
        argv = argv[1:]
    if not argv:
        raise ValueError(
            "no pagezero command to run: put it after --, e.g. -- mem memset -s 1GB -l 10"
        )
    if _names_output(argv):
        raise ValueError("leave -o out of the command: each run writes under the fleet's -o DIR")
    try:
        bare = parse_command(argv)
    except ValueError:
        bare = None  # e.g. sweep, whose -o is required
    for args in ([bare] if bare else []) + [None]:
        args = args or parse_command(argv + ["-o", _PLACEHOLDER])
        if args.command not in FILE_COMMANDS + FOLDER_COMMANDS:
            raise ValueError(
                f"'{shlex.join(argv)}' writes no results; a fleet runs "
                f"mem memset|memcpy|mmap, batch, folio, sweep or report"
            )
    if args.command in ("memset", "memcpy", "mmap"):
        # Sizes are text to argparse; the command would parse them first thing.
        parse_size(args.size)
        parse_page(args.page)
    return argv, "folder" if args.command in FOLDER_COMMANDS else "file"
