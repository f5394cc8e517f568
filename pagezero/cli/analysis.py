"""pagezero sweep | compare | plot: a benchmark over a grid, and what results files show."""

import contextlib
import json
import math
import os
import sys

from pagezero.analysis import compare as comparison
from pagezero.analysis.compare import TIE_NOTE, VARIANT_LEGEND, compare_variants
from pagezero.analysis.significance import MARKERS, METHOD
from pagezero.cli.options import UsageError, check_output
from pagezero.cli.render import interrupted_line, print_json, stopped
from pagezero.figures import plot_bars, plot_comparison, plot_rates, plot_variants
from pagezero.interrupt import deferred
from pagezero.results.points import summarize_points
from pagezero.results.resultset import ResultSet, load_path, load_sources, merged
from pagezero.results.schema import is_count
from pagezero.runs.sweeps import lost_lines, sweep

_WORDS = {"true": True, "false": False, "none": None}


def _grid_value(text):
    """ints and true/false/none as such; anything else (4KB, kernel names) a string."""
    text = text.strip()
    with contextlib.suppress(ValueError):
        return int(text)
    return _WORDS.get(text.lower(), text)


def _grid_file(path):
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    toml = path.endswith(".toml")
    if toml:
        try:
            # mypy checks as the 3.10 floor, which lacks tomllib; the except is that case.
            import tomllib  # type: ignore[import-not-found]
        except ImportError:
            raise ValueError("TOML grids need Python 3.11 or later; use JSON") from None
    with open(path, "rb" if toml else "r") as f:
        try:
            doc = tomllib.load(f) if toml else json.load(f)
        except ValueError as e:  # TOMLDecodeError and JSONDecodeError both are
            raise ValueError(f"{path}: not {'TOML' if toml else 'JSON'}: {e}") from None
    grid = doc.get("grid", doc) if isinstance(doc, dict) else None
    if not isinstance(grid, dict):
        raise ValueError(f"{path}: expected a table of parameter = [values]")
    return grid


def _print_stats(rs):
    """Per point: the median with its own interval, and the spread of the loops' times."""
    # The median's interval from order statistics: a mean's interval can exclude it.
    for row in rs.stats():
        scale, unit = (1e9, "GB/s") if row["unit"] == "bytes/sec" else (1.0, row["unit"])
        low, high = row["median_ci_low"] / scale, row["median_ci_high"] / scale
        interval = f"{row['median_ci_level'] * 100:.0f}% CI of the median {low:.2f}..{high:.2f}"
        interval = "one loop: no interval" if row["n"] < 2 else interval
        print(
            f"{row['label']}: median {row['median'] / scale:.2f} {unit} "
            f"+-{row['stdev_pct']:.1f}% (n={row['n']}, {interval})"
        )


def cmd_sweep(args):
    """pagezero sweep: a benchmark over a grid of parameters, saved to -o."""
    check_output(args.output)
    check_output(args.csv)
    grid = _grid_file(args.grid) if args.grid else {}
    for item in args.param or ():
        name, sep, values = item.partition("=")
        if not sep or not name.strip() or not values.strip():
            raise ValueError(f"invalid -g {item!r}: expected NAME=VALUE[,VALUE...]")
        grid[name.strip()] = [_grid_value(v) for v in values.split(",")]
    rs = sweep(
        args.benchmark,
        grid,
        repeat=args.repeat,
        warmup=args.warmup,
        processes=args.processes,
        progress=not args.quiet,  # on stderr: stdout and -o unchanged
    )
    stop = stopped(rs.interrupted) if rs.interrupted else None
    if stop:
        # The sweep caught the signal to keep what ran; the file says which one.
        rs = ResultSet(rs.results, rs.runs, rs.machine, interrupted=stop.signame, lost=rs.lost)
    for line in lost_lines(rs):  # the lost workers' repetitions are missing
        print(line, file=sys.stderr)
    with deferred():
        rs.save(args.output)
        if args.csv:
            rs.to_csv(args.csv)
    _print_stats(rs)
    if not stop:
        return 0
    planned = args.repeat * math.prod(
        len(v) if isinstance(v, (list, tuple)) else 1 for v in grid.values()
    )
    what = f" after {len(rs)} of {planned} runs; saved to {args.output}"
    print(interrupted_line(stop, what), file=sys.stderr)
    return stop.exit_status


def _by_file(args, loaded, files):
    """compare --by file, each file (or folder) against the first: cmd_compare()'s 8 parts."""
    sets = [rs for rs, _ in loaded]
    threshold = args.threshold / 100
    rows = comparison.compare(*sets, threshold=threshold, alpha=args.alpha, sources=loaded[0][1])
    rows, left = comparison.shared_rows(rows, *sets)
    lacking = dict(zip(files[1:], left["without_base"]))
    line = comparison.left_out_line(files[0], left["base_only"], lacking, left["by_study"])
    left_out = {"base_only": left["base_only"], "without_base": lacking}
    if args.plot:
        plot_comparison(sets, files, args.plot, threshold=threshold, alpha=args.alpha)
    runs = comparison.runs_per_side(rows, len(sets))
    return files, rows, runs, {}, [], [line], left_out, MARKERS


def _by_function(args, loaded, files):
    """compare --by function: the functions of every file side by side, against --base."""
    rs = merged([rs for rs, _ in loaded])
    sources = [s for _, studies in loaded for s in studies]
    threshold = args.threshold / 100
    names, rows, left = compare_variants(
        rs, args.base, threshold=threshold, alpha=args.alpha, sources=sources
    )
    chosen = "" if args.base else " (the first in the kernel table; --base chooses another)"
    lines = [f"functions: {', '.join(names)}, each against {names[0]}{chosen}"]
    pooled = {}  # the files that hold a function, when several: its runs are theirs
    for name in names:
        holding = [f for f, (one, _) in zip(files, loaded) if any(r.function == name for r in one)]
        if len(holding) > 1:
            pooled.setdefault(", ".join(holding), []).append(name)
    lines += [f"runs pooled across {held} for {', '.join(fs)}" for held, fs in pooled.items()]
    line = comparison.left_out_line(names[0], left["base_only"], left["without_base"])
    if args.plot:
        plot_variants(rs, args.plot, names[0], threshold=threshold, alpha=args.alpha)
    head = {"by": "function", "base": names[0], "names": names, "files": files}
    per_file = [summarize_points(one).values() for one, _ in loaded]  # its runs per point
    runs = [comparison.span(s["runs"] for _, s in points) for points in per_file]
    return names, rows, runs, head, lines, [f"note: {TIE_NOTE}", line], left, VARIANT_LEGEND


def cmd_compare(args):
    """pagezero compare: result sets against the first, or their functions against one."""
    if args.base is not None and args.by != "function":
        raise UsageError("--base names the base function: use it with --by function")
    check_output(args.plot)  # before the table: a mistake is one line, nothing else
    loaded = [load_sources(p) for p in args.results]
    files = [os.path.basename(os.path.normpath(p)) or p for p in args.results]
    by = _by_function if args.by == "function" else _by_file
    names, rows, runs, head, above, under, left_out, legend = by(args, loaded, files)
    machines = [dict(rs.machine) for rs, _ in loaded]
    if args.format == "json":
        sides, warnings = comparison.header_json(machines, files, runs)
        head = dict(head or {"names": names}, method=METHOD, alpha=args.alpha)
        head |= {"threshold_pct": args.threshold, "sides": sides, "machine_warnings": warnings}
        print_json(dict(head, rows=rows, left_out=left_out))
    elif args.format == "simple":
        # The base's centre (median of per-run medians), each other's change of it in %.
        for row in rows:
            changes = [c["change_pct"] if c else math.nan for c in row["changes"]]
            print(" ".join(f"{x:f}" for x in [row["base"]["center"], *changes]))
    else:
        text = args.format == "text"
        fit = comparison.wrap if text else list  # --format text: 80 columns
        method = f"{METHOD}, alpha {args.alpha:g}, threshold {args.threshold:g}%"
        lines = comparison.header_lines(machines, files, runs, method, 80 if text else None)
        lines[-1:-1] = fit(above)  # before the method
        table = comparison.format_text if text else comparison.format_table
        lines += [*([""] if text else []), table(rows, names, legend)]
        print("\n".join(lines + fit(line for line in under if line)))
    return 0


def cmd_plot(args):
    """pagezero plot: a results file drawn as STEM.png and STEM.svg."""
    rs = load_path(args.results)  # a results file, or a folder of them (a fleet's)
    if not len(rs):
        raise ValueError(f"{args.results}: holds no results")
    stem = args.output or os.path.splitext(args.results)[0]
    check_output(stem)
    if not set(rs.benchmarks) <= {"memset", "memcpy"}:
        print("\n".join(plot_bars(rs, stem)))
        return 0
    # Rates against the extent, the chunk or the region size.
    for r in rs.results:  # a file written by hand (or damaged) may lack them
        size, chunk = r.params.get("size"), r.params.get("chunk", 0)
        if not is_count(size) or not (chunk is None or is_count(chunk)):
            raise ValueError(
                f"{args.results}: a {r.benchmark} result without a size and chunk in "
                f"bytes ({r.label()}) cannot be drawn against {args.x}"
            )
    if args.x == "size":
        paths = plot_rates(rs, stem, x=lambda r: r.params["size"], xlabel="region size")
    else:
        paths = plot_rates(rs, stem, xlabel=f"{args.x} per call")  # x: the extent, as a chunk
    print("\n".join(paths))
    return 0
