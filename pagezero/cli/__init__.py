"""The pagezero command line: build_parser() declares every command (options in
cli/options.py), main() runs it (exit statuses: docs/cli.rst)."""

import contextlib
import os
import sys

from pagezero import __version__, _core
from pagezero.analysis.cache import INFO_KEY
from pagezero.cli import analysis, fleet, mem, policy, render, store, studies
from pagezero.cli.options import Parser, UsageError, add, command
from pagezero.interrupt import as_interrupted, signals_interrupt
from pagezero.studies.cache import measure_cache
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine, summary

__all__ = ["main", "build_parser", "UsageError"]


def cmd_info(args):
    info = machine()
    if args.measure:
        info[INFO_KEY] = measure_cache(info).to_json()
    if args.format == "json":
        render.print_json(info)
    else:
        print("\n".join(summary(info)))
    return 0


def cmd_kernels(args):
    kinds = ("clear", "copy") if args.kind == "all" else (args.kind,)
    found = [k for kind in kinds for k in kernels(kind)]
    if args.format == "json":
        fields = "kind name available reason temporal zero_only features description".split()
        rows = [{f: getattr(k, f) for f in fields} | {"features": list(k.features)} for k in found]
        render.print_json(rows)  # the features as a list, in their place
    elif args.format == "simple":  # what -f and --kernel accept here, one name a line
        print("\n".join(k.name for k in found if k.available))
    else:
        rows = [("KIND", "NAME", "AVAILABLE", "STORES", "NEEDS", "DESCRIPTION")]
        for k in found:
            available = "yes" if k.available else f"no: {k.reason}"
            stores, needs = "temporal" if k.temporal else "non-temporal", ",".join(k.features)
            rows.append((k.kind, k.name, available, stores, needs or "-", k.description))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    return 0


def build_parser():
    """The parser of the ``pagezero`` command line, every command's options included.

    Returns
    -------
    argparse.ArgumentParser
        Its ``error()`` raises ``UsageError``, which :func:`main` prints in one line.
    """
    parser = Parser(prog="pagezero", description="A laboratory for clearing memory pages.")
    text = "print pagezero's version and exit"
    parser.add_argument("--version", action="version", version=f"pagezero {__version__}", help=text)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    mem_sub = command(sub, "mem", "perf bench mem workloads").add_subparsers(
        dest="benchmark", metavar="BENCHMARK", required=True
    )
    for benchmark, what, own in (("memset", "clearing", "value settle"), ("memcpy", "copying", "")):
        text = f"time {what} a region, as perf bench mem {benchmark}"
        p = command(mem_sub, benchmark, text, mem.cmd_mem)
        add(p, f"size page chunk function nr_loops cycles clock {own} thp offset cache threads")
        add(p, "node cpu_node counters threads_mode runs quiet format output")
    text = "time mapping a region and faulting every page in, as perf bench mem mmap"
    p = command(mem_sub, "mmap", text, mem.cmd_mmap)
    add(p, "size page function nr_loops cycles clock randomize threads thp touch latency")
    add(p, "headroom profile reserve runs quiet format output")
    text = "what this machine is: CPU, caches, hugepages, THP, preemption"
    command(sub, "info", text, cmd_info, "format measure")
    command(sub, "kernels", "list the clearing and copying kernels", cmd_kernels, "kind format")
    text = "clear a folio in a folio_zero_user() strategy's order and time the fault neighbourhood"
    p = command(sub, "folio", text, policy.cmd_folio)
    add(p, "page strategy fault_index kernel nt_kernel batch nr_loops backing cold cache node")
    add(p, "counters runs quiet format output")
    text = "clear a region in clear_pages() batches and time every batch"
    p = command(sub, "batch", text, policy.cmd_batch)
    add(p, "size batch kernel nr_loops yield_between backing cache threads node counters runs")
    add(p, "quiet format output")
    text = "sweep this machine and advise kernels, the cache knee and batch sizes"
    command(sub, "advise", text, studies.cmd_advise, "quick quiet budget explain format output")
    text = "measure demand faults on huge pages, replay the running kernel's clearing policy, "
    text += "project every policy with clear_pages()'s kernel and the fastest non-temporal one"
    options = "page runs reserve size nr_loops quiet format output"
    command(sub, "predict", text, studies.cmd_predict, options)
    text = "run a benchmark over a grid of parameters"
    options = "benchmark param grid repeat warmup processes output csv quiet"
    command(sub, "sweep", text, analysis.cmd_sweep, options)

    text = (
        "compare result sets (files or report folders): base, then one or more others, "
        "or with --by function their functions side by side; the run is the unit"
    )
    options = "results threshold alpha format plot by base"
    command(sub, "compare", text, analysis.cmd_compare, options)

    text = "plot a results file as PNG and SVG"
    command(sub, "plot", text, analysis.cmd_plot, "results output x")
    text = "the default study of this machine, as a folder"
    command(sub, "report", text, studies.cmd_report, "output quick runs reserve no_reserve quiet")
    fleet.add_parsers(sub)
    store.add_parsers(sub)
    return parser


def _fail(message, status):
    print(f"pagezero: error: {message}", file=sys.stderr)
    return status


def _interrupted(exc):
    """The exit status after a signal (the first, if a second landed), its line printed once."""
    chain = [exc]
    while isinstance(chain[-1].__context__, KeyboardInterrupt):
        chain.append(chain[-1].__context__)
    stop = as_interrupted(chain[-1])
    with contextlib.suppress(KeyboardInterrupt):  # yet another: the status is all that is left
        if not any(getattr(e, "reported", False) for e in chain):
            # Stopped where no result was being kept: before, between or after runs.
            print(render.interrupted_line(stop, "; nothing saved"), file=sys.stderr)
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
        The exit status (docs/cli.rst); ``--help`` and ``--version`` raise ``SystemExit(0)``.
    """
    try:
        with signals_interrupt():
            args = build_parser().parse_args(argv)
            return args.run(args)
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except (UsageError, ValueError) as e:
        return _fail(e, 2)
    except BrokenPipeError:  # the reader went away (`| head`): not an error worth a message
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _core.MappingError as e:
        return _fail(e.strerror or e, 1)
    except (_core.PagezeroError, RuntimeError) as e:  # RuntimeError: a sweep worker that died
        return _fail(e, 1)
    except OSError as e:
        return _fail(f"{e.filename or ''}: {e.strerror}" if e.filename else e, 1)
