"""pagezero sweep | compare | plot | report: studies over many runs, and what
is drawn from their result files."""

import json
import math
import os
import signal
import sys

from pagezero.analysis.compare import (
    compare,
    format_table,
    header_json,
    header_lines,
    runs_per_side,
)
from pagezero.analysis.significance import METHOD
from pagezero.cli.options import add_format, add_output, check_output, integer, number
from pagezero.cli.render import interrupted_line
from pagezero.figures import plot_bars, plot_comparison, plot_rates
from pagezero.interrupt import Interrupted, deferred, received
from pagezero.results.folders import load_path, load_sources
from pagezero.results.resultset import ResultSet
from pagezero.runs.sweeps import BENCHMARKS, lost_lines, sweep
from pagezero.studies.report import SCALES, run_report

__all__ = ["COMMANDS", "add_parsers"]


def _load(path):
    return load_path(path)  # a results file, or a folder of them (a fleet's DIR/<machine>)


def _grid_value(text):
    """A grid value from the command line: ints and true/false/none as such,
    anything else (sizes such as 4KB, kernel names) as a string."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return int(text)
    except ValueError:
        return text.strip()


def _grid_from_file(path):
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    if path.endswith(".toml"):
        try:
            # mypy checks as the 3.10 floor, which lacks tomllib; the except below is that case.
            import tomllib  # type: ignore[import-not-found]
        except ImportError:
            raise ValueError("TOML grids need Python 3.11 or later; use JSON") from None
        with open(path, "rb") as f:
            try:
                doc = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                raise ValueError(f"{path}: not TOML: {e}") from None
    else:
        with open(path) as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: not JSON: {e}") from None
    grid = doc.get("grid", doc) if isinstance(doc, dict) else None
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: expected a table of parameter = [values]")
    return grid


def _grid(args):
    grid = _grid_from_file(args.grid) if args.grid else {}
    for item in args.param or ():
        name, sep, values = item.partition("=")
        if not sep or not name.strip() or not values.strip():
            raise ValueError(f"invalid -g {item!r}: expected NAME=VALUE[,VALUE...]")
        grid[name.strip()] = [_grid_value(v) for v in values.split(",")]
    return grid


def _print_stats(rs):
    """Per point: the median with the median's own interval (order statistics,
    stats.median_interval: a mean's interval can exclude the median), and the
    spread of the loops' times."""
    for row in rs.stats():
        scale, unit = (1e9, "GB/s") if row["unit"] == "bytes/sec" else (1.0, row["unit"])
        if row["n"] > 1:
            interval = (
                f"{row['median_ci_level'] * 100:.0f}% CI of the median "
                f"{row['median_ci_low'] / scale:.2f}..{row['median_ci_high'] / scale:.2f}"
            )
        else:
            interval = "one loop: no interval"
        print(
            f"{row['label']}: median {row['median'] / scale:.2f} {unit} "
            f"+-{row['stdev_pct']:.1f}% (n={row['n']}, {interval})"
        )


def _stopped(name=None):
    """The Interrupted of the signal a sweep or the report caught and kept going after:
    `name` when the ResultSet says which (a signal its C loops or a worker took)."""
    return Interrupted(getattr(signal, name or "", None) or received() or signal.SIGINT)


def cmd_sweep(args):
    """`pagezero sweep`: run a benchmark over a grid of parameters and save it.

    The points are visited in a random order per repetition (``--processes N``: in
    N fresh worker processes). Prints each point's statistics (the median with its
    interval); on stderr, a line per lost worker and, when a signal stopped it, how
    many runs were made and where they were saved.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status: 0; after a stop signal (Ctrl-C, SIGTERM, SIGHUP) what was
        measured is saved and the signal's status (130, 143, 129) is returned.
        Errors are raised for :func:`pagezero.cli.main` to turn into one line and
        exit status 2 (usage) or 1 (the machine cannot do it).
    """
    check_output(args.output)
    check_output(args.csv)
    grid = _grid(args)
    rs = sweep(
        args.benchmark, grid, repeat=args.repeat, warmup=args.warmup, processes=args.processes
    )
    stop = _stopped(rs.interrupted) if rs.interrupted else None
    if stop:
        # The sweep caught the signal to keep what ran; the file says which one.
        rs = ResultSet(rs.results, rs.runs, rs.machine, interrupted=stop.signame, lost=rs.lost)
    # Kept and saved; the lost workers' repetitions are missing, and stderr says so.
    for line in lost_lines(rs):
        print(line, file=sys.stderr)
    with deferred():
        rs.save(args.output)
        if args.csv:
            rs.to_csv(args.csv)
    _print_stats(rs)
    if stop:
        planned = args.repeat * math.prod(
            len(v) if isinstance(v, (list, tuple)) else 1 for v in grid.values()
        )
        print(
            interrupted_line(stop, f" after {len(rs)} of {planned} runs; saved to {args.output}"),
            file=sys.stderr,
        )
        return stop.exit_status
    return 0


def _compare_simple(rows):
    """One line per point: the base's centre (median of its per-run medians), then
    each other set's change of the centre in percent (nan where it lacks the point)."""
    for row in rows:
        changes = [c["change_pct"] if c else math.nan for c in row["changes"]]
        print(" ".join(f"{x:f}" for x in [row["base"]["center"], *changes]))


def _name(path):
    """A side's name in the table: the file's or the folder's own name."""
    return os.path.basename(os.path.normpath(path)) or path


def cmd_compare(args):
    """`pagezero compare`: compare results files or report folders with the first.

    The run (one process) is the unit: per point, the change of the median of per-run
    medians, marked ``(R)``/``(I)`` when beyond ``--threshold`` (%) and significant by
    Welch's t-test on the logs of the per-run medians (``--alpha``), ``~`` when beyond
    but not significant, ``?`` with fewer than 3 runs a side
    (:func:`pagezero.analysis.compare.compare`). Prints the header (each side's kernel,
    preemption, THP, runs; machine warnings; the method), then the table and its
    legend; ``--format json`` the same as a document, ``--format simple`` one line of
    numbers per point. ``--plot STEM`` also draws STEM.png and STEM.svg.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0. Errors are raised for :func:`pagezero.cli.main` to turn
        into one line and exit status 2 (usage) or 1 (the machine cannot do it).
    """
    check_output(args.plot)  # before the table: a mistake is one line, nothing else
    loaded = [load_sources(p) for p in args.results]
    sets = [rs for rs, _ in loaded]
    threshold = args.threshold / 100.0
    rows = compare(*sets, threshold=threshold, alpha=args.alpha, sources=loaded[0][1])
    names = [_name(p) for p in args.results]
    machines = [dict(rs.machine) for rs in sets]
    runs = runs_per_side(rows, len(sets))
    method = f"{METHOD}, alpha {args.alpha:g}, threshold {args.threshold:g}%"
    if args.format == "json":
        sides, warnings = header_json(machines, names, runs)
        print(
            json.dumps(
                {
                    "names": names,
                    "rows": rows,
                    "method": METHOD,
                    "alpha": args.alpha,
                    "threshold_pct": args.threshold,
                    "sides": sides,
                    "machine_warnings": warnings,
                },
                indent=1,
            )
        )
    elif args.format == "simple":
        _compare_simple(rows)
    else:
        print("\n".join(header_lines(machines, names, runs, method)))
        print(format_table(rows, names))
    if args.plot:
        plot_comparison(sets, names, args.plot, threshold=threshold, alpha=args.alpha)
    return 0


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def cmd_plot(args):
    """`pagezero plot`: draw a results file as STEM.png and STEM.svg.

    memset and memcpy results are drawn as rates (bytes/sec) against the extent, the
    chunk or the region size (``--x``); other benchmarks as bars. Prints the paths
    written.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status, 0.

    Raises
    ------
    ValueError
        The file holds no results (exit status 2).
    """
    rs = _load(args.results)
    if not len(rs):
        raise ValueError(f"{args.results}: holds no results")
    stem = args.output or os.path.splitext(args.results)[0]
    check_output(stem)
    if set(rs.benchmarks) <= {"memset", "memcpy"}:
        # A file written by hand (or damaged) may lack the sizes the x axis needs.
        for r in rs.results:
            size, chunk = r.params.get("size"), r.params.get("chunk", 0)
            if not _is_count(size) or not (chunk is None or _is_count(chunk)):
                raise ValueError(
                    f"{args.results}: a {r.benchmark} result without a size and chunk in "
                    f"bytes ({r.label()}) cannot be drawn against {args.x}"
                )
        x = {
            "extent": lambda r: r.params.get("chunk") or r.params["size"],
            "chunk": lambda r: r.params.get("chunk") or r.params["size"],
            "size": lambda r: r.params["size"],
        }[args.x]
        paths = plot_rates(
            rs, stem, x=x, xlabel=f"{args.x} per call" if args.x != "size" else "region size"
        )
    else:
        paths = plot_bars(rs, stem)
    print("\n".join(paths))
    return 0


def cmd_report(args):
    """`pagezero report`: the default study of this machine, as a folder.

    Runs the studies of :mod:`pagezero.studies.report` (``--runs N`` fresh processes per
    point; ``--quick`` or ``PAGEZERO_SCALE`` picks a smaller scale), prints where
    ``report.md`` was written and its summary; on stderr, each study that failed with
    its reason (the others are kept).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        The exit status: 0; after a stop signal (Ctrl-C, SIGTERM, SIGHUP) what was
        measured is saved and the signal's status (130, 143, 129) is returned.
        Errors are raised for :func:`pagezero.cli.main` to turn into one line and
        exit status 2 (usage) or 1 (the machine cannot do it).

    Raises
    ------
    ValueError
        ``PAGEZERO_SCALE`` names no scale (exit status 2).
    """
    scale = "quick" if args.quick else os.environ.get("PAGEZERO_SCALE", "full")
    if scale not in SCALES:
        raise ValueError(f"PAGEZERO_SCALE={scale!r} is not one of {', '.join(SCALES)}")
    run = run_report(args.output, scale=scale, reserve=args.reserve, runs=args.runs)
    out = run.out_dir
    print(f"report written to {out}/report.md")
    with open(os.path.join(out, "report.md")) as f:
        text = f.read()
    summary_part = text.split("## Summary", 1)[-1].split("##", 1)[0].strip()
    print(summary_part)
    for section in run.failed:
        print(f'pagezero: study "{section.title}" failed: {section.failed}', file=sys.stderr)
    if run.interrupted:
        # The report caught the signal to write what was measured.
        stop = _stopped(run.interrupted)
        print(interrupted_line(stop, f"; the part measured is in {out}"), file=sys.stderr)
        return stop.exit_status
    return 0


COMMANDS = {"sweep": cmd_sweep, "compare": cmd_compare, "plot": cmd_plot, "report": cmd_report}


def add_parsers(sub):
    """Add the ``sweep``, ``compare``, ``plot`` and ``report`` commands.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``pagezero`` parser (:func:`pagezero.cli.build_parser`).
    """
    p = sub.add_parser("sweep", help="run a benchmark over a grid of parameters")
    p.add_argument("benchmark", choices=sorted(BENCHMARKS))
    p.add_argument(
        "-g",
        "--param",
        action="append",
        metavar="NAME=V1,V2",
        help="a grid axis, e.g. -g function=x86-64-stosb,default -g chunk=4KB,2MB",
    )
    p.add_argument("--grid", metavar="FILE", help="grid from a JSON or TOML file: name = [values]")
    p.add_argument("-r", "--repeat", type=integer, default=3, help="repetitions (default 3)")
    p.add_argument(
        "--warmup", type=integer, default=1, help="warm-up passes thrown away (default 1)"
    )
    p.add_argument(
        "--processes",
        type=integer,
        default=1,
        help="spread repetitions over this many fresh processes (default 1)",
    )
    add_output(p, help=None, required=True)
    p.add_argument("--csv", metavar="FILE.csv", help="also write the tidy table as CSV")

    p = sub.add_parser(
        "compare",
        help="compare result sets (files or report folders): base, "
        "then one or more others; the run is the unit",
    )
    p.add_argument("results", nargs="+", metavar="RESULTS.json|DIR")
    p.add_argument(
        "--threshold",
        type=number,
        default=2.0,
        help="smallest change worth flagging, in percent (default 2)",
    )
    p.add_argument(
        "--alpha",
        type=number,
        default=0.01,
        help="significance level of the test on the runs' medians (default 0.01)",
    )
    add_format(
        p,
        ("default", "simple", "json"),
        help="simple: per point, the base's median of per-run medians and each "
        "other's change of it in percent",
    )
    p.add_argument("--plot", metavar="STEM", help="also draw STEM.png and STEM.svg")

    p = sub.add_parser("plot", help="plot a results file as PNG and SVG")
    p.add_argument("results", metavar="RESULTS.json")
    add_output(p, help="default: the results file's name", metavar="STEM")
    p.add_argument("--x", default="extent", choices=["extent", "chunk", "size"])

    p = sub.add_parser("report", help="the default study of this machine, as a folder")
    add_output(p, help="folder to write (default: pagezero-report-DATE-TIME)", metavar="DIR")
    p.add_argument(
        "--quick", action="store_true", help="a smaller study, one run per point: a few minutes"
    )
    p.add_argument(
        "--runs",
        type=integer,
        default=None,
        metavar="N",
        help="fresh processes per point, each cell the median of their medians "
        "(default 3; 1 with --quick)",
    )
    p.add_argument(
        "--reserve",
        action="store_true",
        help="reserve the 2MB and 1GB hugepages the fault study needs (root), "
        "giving them back afterwards; without it, sizes lacking pages are skipped",
    )
