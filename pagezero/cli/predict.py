"""pagezero predict: what a new clearing policy would gain on this machine's faults."""

import json
import sys

from pagezero.cli.options import UsageError, add_format, add_output, check_output, integer
from pagezero.cli.render import interrupted_line
from pagezero.files import atomic_write
from pagezero.interrupt import as_interrupted, deferred
from pagezero.studies.predict import PAGES, predict
from pagezero.studies.predict.study import FAULT_LOOPS

__all__ = ["COMMANDS", "add_parsers"]


def _print(prediction, fmt):
    if fmt == "json":
        print(json.dumps(prediction.to_json(), indent=1))
    elif fmt == "simple":
        print("\n".join(prediction.simple()))
    else:
        print("\n".join(prediction.describe()))


def _save(path, prediction):
    if path:
        atomic_write(path, lambda f: json.dump(prediction.to_json(), f, indent=1))


def cmd_predict(args):
    """`pagezero predict`: measure demand faults on 2MB or 1GB pages, replay the
    running kernel's clearing policy, and project every other policy's fault rate.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status: 0, or 130, 143, 129 after a stop signal (what was
        measured is printed and saved to -o); errors are raised for
        :func:`pagezero.cli.main` (exit 2 or 1).
    """
    if args.runs < 1:
        raise UsageError(f"argument --runs: must be a positive integer, not {args.runs}")
    check_output(args.output)
    try:
        prediction = predict(
            args.page, runs=args.runs, reserve=args.reserve, size=args.size, loops=args.nr_loops
        )
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        with deferred():
            partial = stop.partial
            kept = "; nothing measured"
            if partial is not None:
                _print(partial, args.format)
                _save(args.output, partial)
                kept = f"; saved to {args.output}" if args.output else "; shown above"
            print(interrupted_line(stop, kept), file=sys.stderr)
            stop.reported = True
        raise stop from None
    _print(prediction, args.format)
    _save(args.output, prediction)
    return 0


def add_parsers(sub):
    """Add the ``predict`` command to the top-level subparsers.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The top-level parser's subparsers.
    """
    text = (
        "measure demand faults on huge pages, replay the running kernel's clearing "
        "policy, and project what every other policy would give"
    )
    p = sub.add_parser("predict", help=text, description=text)
    p.add_argument(
        "-p", "--page", default="2MB", choices=list(PAGES), help="the huge page size (default 2MB)"
    )
    p.add_argument(
        "--runs",
        default=3,
        type=integer,
        metavar="N",
        help="fresh processes for the faults and for the replays (default 3)",
    )
    p.add_argument(
        "--reserve",
        action="store_true",
        help="grow the hugepage pool by what the faults lack (root), giving it back afterwards",
    )
    p.add_argument(
        "-s",
        "--size",
        default="1GB",
        help="bytes faulted per loop, a whole number of pages (default: 1GB)",
    )
    p.add_argument(
        "-l",
        "--nr_loops",
        default=FAULT_LOOPS,
        type=integer,
        help=f"fault loops per run (default {FAULT_LOOPS})",
    )
    add_format(p, ("default", "simple", "json"))
    add_output(p, help="also save the prediction as JSON", metavar="FILE")


COMMANDS = {"predict": cmd_predict}
