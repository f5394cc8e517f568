"""The pagezero command line.

    pagezero mem memset|memcpy|mmap [perf bench mem options]
    pagezero kernels | info
    pagezero folio | batch | advise       (clearing policies)
    pagezero predict                      (what a new clearing policy would gain)
    pagezero sweep | compare | plot | report
    pagezero fleet up|run|table | store add|list|history|export   (many machines, history)

build_parser() declares every command (the options they share once, in
cli/options.py); main() runs the cmd_<name> that COMMANDS names for it. User errors
print one line, "pagezero: error: ...", and exit 2; a machine that cannot do what
was asked (no hugepages, no cycle counter, a kernel the CPU lacks) exits 1 with a
line that names the cause and the fix. SIGINT, SIGTERM and SIGHUP stop a run: what
was measured is saved to -o, marked interrupted, one line says so, and the exit
status is the shell's for that signal (130, 143, 129). Never a traceback.
"""

import os
import sys

from pagezero import __version__, _core
from pagezero.cli import analysis, fleet, mem, policy, store, studies, system
from pagezero.cli.options import (
    Parser,
    UsageError,
    add,
    add_format,
    fill_value,
    integer,
    number,
)
from pagezero.cli.render import interrupted_line
from pagezero.interrupt import as_interrupted, signals_interrupt
from pagezero.measure.policy import PRESETS, STRATEGIES
from pagezero.runs.sweeps import BENCHMARKS
from pagezero.studies.advise.study import DEFAULT_BUDGETS_MS

__all__ = ["main", "build_parser", "COMMANDS", "UsageError"]

COMMANDS = {
    "memset": mem.cmd_mem,
    "memcpy": mem.cmd_mem,
    "mmap": mem.cmd_mmap,
    "info": system.cmd_info,
    "kernels": system.cmd_kernels,
    "folio": policy.cmd_folio,
    "batch": policy.cmd_batch,
    "advise": studies.cmd_advise,
    "predict": studies.cmd_predict,
    "sweep": analysis.cmd_sweep,
    "compare": analysis.cmd_compare,
    "plot": analysis.cmd_plot,
    "report": studies.cmd_report,
    **fleet.COMMANDS,
    **store.COMMANDS,
}

_SIMPLE = "default: perf's text; simple: only the number"


def _command(sub, name, text):
    return sub.add_parser(name, help=text, description=text)


def _mem_parsers(sub):
    mem_sub = _command(sub, "mem", "perf bench mem workloads").add_subparsers(
        dest="benchmark", metavar="BENCHMARK", required=True
    )
    for benchmark in ("memset", "memcpy"):
        what = "clearing" if benchmark == "memset" else "copying"
        p = _command(mem_sub, benchmark, f"time {what} a region, as perf bench mem {benchmark}")
        p.set_defaults(command=benchmark)
        add(p, "size", "page")
        chunk = "bytes per kernel call; 0 means the whole extent (default: 0)"
        p.add_argument("-k", "--chunk", default="0", help=chunk)
        add(p, "function", "nr_loops", "cycles", "clock")
        if benchmark == "memset":
            value = "fill byte 0..255 (default 0), or 'loop' to write the loop index as perf does"
            p.add_argument("--value", default=0, type=fill_value, help=value)
            p.add_argument(
                "--settle",
                default=0,
                type=integer,
                metavar="N",
                help="up to N untimed loops in the buffer before timing, until two in a "
                "row agree within 5%% (default 0: perf's loops, as they are)",
            )
        add(p, "thp")
        p.add_argument(
            "--offset",
            default=0,
            type=integer,
            metavar="BYTES",
            help="start the buffers BYTES past a page boundary (default 0, as perf "
            "since it mmap()s them; 16 reproduces perf 6.1's malloc()ed buffers)",
        )
        add(p, "cache", "threads", "node", "cpu_node", "counters")
        p.add_argument(
            "--threads-mode",
            default="shared",
            choices=["shared", "private"],
            help="shared: disjoint parts of one region (default); private: a region of --size each",
        )
        add(p, "runs", "quiet")
        add_format(p, ("default", "simple"), help=_SIMPLE)
        add(p, "output")

    text = "time mapping a region and faulting every page in, as perf bench mem mmap"
    p = _command(mem_sub, "mmap", text)
    p.set_defaults(command="mmap")
    add(p, "size", "page", "function", "nr_loops", "cycles", "clock")
    p.add_argument(
        "-r",
        "--randomize",
        default=0,
        type=integer,
        metavar="SEED",
        help="demand: write a random byte of each page, drawn as rand() after "
        "srand(SEED + thread) (default: 0, byte 0 of each page)",
    )
    add(p, "threads", "thp")
    p.add_argument(
        "--touch",
        default="perf",
        choices=("perf", "write"),
        help="perf: touch each page as perf does, its byte read then written (after every "
        "workload, populated ones too); write: demand writes one byte per page, the studies' "
        "write fault (default: perf)",
    )
    latency = "also time each fault (groups of 16 for 4KB pages): p50, p99, max"
    p.add_argument("--latency", action="store_true", help=latency)
    p.add_argument(
        "--headroom",
        action="store_true",
        help="then clear the same extents with every clear kernel and print how "
        "much faster the best one is than the faults",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="sample where the CPU is during the timed faults (perf events, kernel symbols "
        "from /proc/kallsyms) and print the kernel's clearing share, its routine and the rest "
        "of the fault by group",
    )
    add(p, "reserve", "runs", "quiet")
    add_format(p, ("default", "simple"), help=_SIMPLE)
    add(p, "output")


def _policy_parsers(sub):
    presets = ", ".join(PRESETS)
    text = "clear a folio in a folio_zero_user() strategy's order and time the fault neighbourhood"
    p = _command(sub, "folio", text)
    add(p, "page")
    strategies = list(STRATEGIES) + ["all"]
    p.add_argument(
        "--strategy", default="all", choices=strategies, help="clearing order (default: all)"
    )
    fault = "the faulting page, 0-based (default: 0, the common case)"
    p.add_argument("--fault-index", default=0, type=integer, help=fault)
    add(p, "kernel")
    nt = "non-temporal kernel for nocache-except-target (default: the first available)"
    p.add_argument("--nt-kernel", help=nt)
    batch = f"most clear_pages() clears at once: a size or a preset ({presets}) (default: 32MB)"
    p.add_argument("-b", "--batch", default="32MB", help=batch)
    add(p, "nr_loops", "backing")
    p.add_argument(
        "--cold",
        default="auto",
        choices=["auto", "clflush", "evict"],
        help="how the cold baseline evicts the neighbourhood "
        "(default: clflush where the CPU has it)",
    )
    add(p, "cache", "node", "counters", "runs", "quiet")
    simple = "simple: 'rate touch_ns_per_line cold_ns_per_line' per strategy"
    add_format(p, ("default", "simple", "json"), help=simple)
    add(p, "output")

    p = _command(sub, "batch", "clear a region in clear_pages() batches and time every batch")
    add(p, "size")
    batch = f"batch: a size or a preset ({presets}); repeat for several (default: every preset)"
    p.add_argument("-b", "--batch", action="append", help=batch)
    add(p, "kernel", "nr_loops")
    yields = "sched_yield() after each batch, as cond_resched()"
    p.add_argument("--yield", dest="yield_between", action="store_true", help=yields)
    add(p, "backing", "cache", "threads", "node", "counters", "runs", "quiet")
    add_format(p, ("default", "simple", "json"), help="simple: 'rate worst_ms p99_ms' per batch")
    add(p, "output")


def _study_parsers(sub):
    text = "sweep this machine and advise kernels, the cache knee and batch sizes"
    p = _command(sub, "advise", text)
    add(p, "quick", "quiet")
    p.add_argument(
        "--budget",
        action="append",
        metavar="MS",
        type=number,
        help="latency budget in ms for the worst batch in 9 visits of 10 (per visit the "
        "slowest batch position, median over its passes); repeat for several (default: "
        f"{' and '.join(f'{b:g}' for b in DEFAULT_BUDGETS_MS)})",
    )
    explain = (
        "after the answers, say how ties were judged and chosen and what a budget is "
        "checked against"
    )
    p.add_argument("--explain", action="store_true", help=explain)
    add_format(p, ("default", "json"))
    add(p, "output")

    text = (
        "measure demand faults on huge pages, replay the running kernel's clearing "
        "policy, and project what every policy would give with clear_pages()'s kernel "
        "and with the fastest non-temporal one"
    )
    p = _command(sub, "predict", text)
    add(p, "page", "runs", "reserve", "size", "nr_loops", "quiet")
    add_format(p, ("default", "simple", "json"))
    add(p, "output")


def _analysis_parsers(sub):
    p = _command(sub, "sweep", "run a benchmark over a grid of parameters")
    p.add_argument("benchmark", choices=sorted(BENCHMARKS))
    axis = "a grid axis, e.g. -g function=x86-64-stosb,default -g chunk=4KB,2MB"
    p.add_argument("-g", "--param", action="append", metavar="NAME=V1,V2", help=axis)
    p.add_argument("--grid", metavar="FILE", help="grid from a JSON or TOML file: name = [values]")
    p.add_argument("-r", "--repeat", type=integer, default=3, help="repetitions (default 3)")
    warmup = "warm-up passes thrown away (default 1)"
    p.add_argument("--warmup", type=integer, default=1, help=warmup)
    processes = "spread repetitions over this many fresh processes (default 1)"
    p.add_argument("--processes", type=integer, default=1, help=processes)
    add(p, "output")
    p.add_argument("--csv", metavar="FILE.csv", help="also write the tidy table as CSV")
    add(p, "quiet")

    text = (
        "compare result sets (files or report folders): base, then one or more others, "
        "or with --by function their functions side by side; the run is the unit"
    )
    p = _command(sub, "compare", text)
    p.add_argument("results", nargs="+", metavar="RESULTS.json|DIR")
    threshold = "smallest change worth flagging, in percent (default 2)"
    p.add_argument("--threshold", type=number, default=2.0, help=threshold)
    alpha = "significance level of the test on the runs' medians (default 0.01)"
    p.add_argument("--alpha", type=number, default=0.01, help=alpha)
    simple = (
        "simple: per point, the base's median of per-run medians and each other's "
        "change of it in percent"
    )
    # Not add_format(): "text" there is the other commands' old name for default.
    paste = "text: the table in 80 columns, to paste in a patch mail or review reply"
    p.add_argument(
        "--format",
        default="default",
        choices=["default", "text", "simple", "json"],
        help=f"{simple}; {paste}",
    )
    p.add_argument("--plot", metavar="STEM", help="also draw STEM.png and STEM.svg")
    by = (
        "file: each file or folder a side, against the first (default); function: the "
        "functions (kernels, workloads) of all of them side by side, against --base"
    )
    p.add_argument("--by", default="file", choices=["file", "function"], help=by)
    base = "with --by function: the base function (default: the first in the kernel table)"
    p.add_argument("--base", metavar="FUNCTION", help=base)

    p = _command(sub, "plot", "plot a results file as PNG and SVG")
    p.add_argument("results", metavar="RESULTS.json")
    add(p, "output")
    p.add_argument("--x", default="extent", choices=["extent", "chunk", "size"])

    p = _command(sub, "report", "the default study of this machine, as a folder")
    add(p, "output", "quick", "runs", "reserve", "no_reserve", "quiet")


def build_parser():
    """The parser of the ``pagezero`` command line, every command's options included.

    Returns
    -------
    argparse.ArgumentParser
        Its ``error()`` raises ``UsageError`` instead of exiting, so that :func:`main`
        prints one line and returns 2. The reference docs render it (sphinx-argparse).
    """
    parser = Parser(prog="pagezero", description="A laboratory for clearing memory pages.")
    parser.add_argument(
        "--version",
        action="version",
        version=f"pagezero {__version__}",
        help="print pagezero's version and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _mem_parsers(sub)
    p = _command(sub, "info", "what this machine is: CPU, caches, hugepages, THP, preemption")
    add_format(p, ("default", "json"))
    p.add_argument(
        "--measure",
        action="store_true",
        help="also measure the cache a run has (temporal kernels over extents in 3 runs, "
        "about half a minute), beside sysfs's LLC",
    )
    p = _command(sub, "kernels", "list the clearing and copying kernels")
    p.add_argument("--kind", default="all", choices=["clear", "copy", "all"])
    add_format(
        p,
        ("default", "simple", "json"),
        help="simple: the names of the kernels this machine can run, one a line",
    )
    _policy_parsers(sub)
    _study_parsers(sub)
    _analysis_parsers(sub)
    fleet.add_parsers(sub)
    store.add_parsers(sub)
    return parser


def _fail(message, status):
    print(f"pagezero: error: {message}", file=sys.stderr)
    return status


def _interrupted(exc):
    """The exit status after a signal, its line on stderr printed once."""
    # A second signal can land while the first is handled: the first decides, and a
    # line already printed for either is not printed again.
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
            args = build_parser().parse_args(argv)
            return COMMANDS[args.command](args)
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except (UsageError, ValueError) as e:
        return _fail(e, 2)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _core.MappingError as e:
        return _fail(e.strerror or e, 1)
    except _core.PagezeroError as e:
        return _fail(e, 1)
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror}" if e.filename else e, 1)
    except RuntimeError as e:  # a sweep worker that died
        return _fail(e, 1)
