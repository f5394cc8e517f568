"""The pagezero command line.

    pagezero mem memset|memcpy|mmap [perf bench mem options]
    pagezero kernels | info
    pagezero folio | batch | advise       (clearing policies)
    pagezero predict                      (what a new clearing policy would gain)
    pagezero sweep | compare | plot | report
    pagezero fleet up|run|table | store add|list|history|export   (many machines, history)

One module per command family, each with its cmd_<name> functions and the
parsers for them; main() picks the function from one dispatch table. User
errors print one line, "pagezero: error: ...", and exit 2; a machine that
cannot do what was asked (no hugepages, no cycle counter, a kernel the CPU
lacks) exits 1 with a line that names the cause and the fix. SIGINT, SIGTERM
and SIGHUP stop a run: what was measured is saved to -o, marked interrupted,
one line says so, and the exit status is the shell's for that signal (130,
143, 129). Never a traceback.
"""

import os
import sys

from pagezero import __version__, _core
from pagezero.cli import analysis, fault, fleet, mem, policy, predict, store, system
from pagezero.cli.options import Parser, UsageError
from pagezero.cli.render import interrupted_line
from pagezero.interrupt import as_interrupted, signals_interrupt

__all__ = ["main", "build_parser", "COMMANDS"]

EXIT_USAGE = 2
EXIT_ENVIRONMENT = 1

COMMANDS = {
    **mem.COMMANDS,
    **fault.COMMANDS,
    **system.COMMANDS,
    **policy.COMMANDS,
    **predict.COMMANDS,
    **analysis.COMMANDS,
    **fleet.COMMANDS,
    **store.COMMANDS,
}


def build_parser():
    """The top-level parser of `pagezero`, with every command's subparser.

    Returns
    -------
    argparse.ArgumentParser
        A :class:`~pagezero.cli.options.Parser`: its ``error()`` raises
        :class:`~pagezero.cli.options.UsageError` instead of exiting, so that
        :func:`main` prints one line and returns 2. The reference docs render
        the whole command line from it (sphinx-argparse).
    """
    parser = Parser(prog="pagezero", description="A laboratory for clearing memory pages.")
    parser.add_argument(
        "--version",
        action="version",
        version=f"pagezero {__version__}",
        help="print pagezero's version and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    mem_parser = sub.add_parser("mem", help="perf bench mem workloads")
    mem_sub = mem_parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    mem_sub.required = True
    mem.add_parsers(mem_sub)
    fault.add_parser(mem_sub)
    system.add_parsers(sub)
    policy.add_parsers(sub)
    predict.add_parsers(sub)
    analysis.add_parsers(sub)
    fleet.add_parsers(sub)
    store.add_parsers(sub)
    return parser


def _fail(message, status):
    print(f"pagezero: error: {message}", file=sys.stderr)
    return status


def _interrupted(exc):
    """The exit status after a signal, the line on stderr printed once."""
    # A second signal can land while the first is handled: the first decides,
    # and a line already printed for either is not printed again.
    chain = [exc]
    while isinstance(chain[-1].__context__, KeyboardInterrupt):
        chain.append(chain[-1].__context__)
    stop = as_interrupted(chain[-1])
    try:
        if not any(getattr(e, "reported", False) for e in chain):
            # Stopped where no result was being kept: before, between or after runs.
            print(interrupted_line(stop, "; nothing saved"), file=sys.stderr)
    except KeyboardInterrupt:
        pass  # yet another signal: the status is all that is left to give
    return stop.exit_status


def _run(argv):
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command](args)


def main(argv=None):
    """Run the ``pagezero`` command line (the console script's entry point).

    Parameters
    ----------
    argv : list of str, optional
        The arguments without the program name; by default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0; 2 for a usage error (one line, ``pagezero: error: ...``);
        1 for a machine that cannot do what was asked; 130, 143 or 129 after SIGINT,
        SIGTERM or SIGHUP. ``--help`` and ``--version`` exit 0 through
        :class:`SystemExit`.
    """
    try:
        with signals_interrupt():
            return _run(argv)
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except (UsageError, ValueError) as e:
        return _fail(e, EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _core.MappingError as e:
        return _fail(e.strerror or e, EXIT_ENVIRONMENT)
    except _core.PagezeroError as e:
        return _fail(e, EXIT_ENVIRONMENT)
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror}" if e.filename else e, EXIT_ENVIRONMENT)
    except RuntimeError as e:  # a sweep worker that died
        return _fail(e, EXIT_ENVIRONMENT)
