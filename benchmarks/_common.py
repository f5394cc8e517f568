"""Helpers shared by the benchmark scripts: arguments, alternating rounds,
medians, tables, the PASS/FAIL verdict.

Rates are bytes/sec; tables show them in GB/s with GB = 10^9 bytes.
The machine is a noisy shared VM, so every comparison is a ratio of medians
over rounds in which the contenders alternate (and the order within a round
rotates, so neither side always runs first, on a cooler or warmer machine).
"""

import argparse
import os
import statistics
import subprocess
import sys

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(description, rounds=5, extra=None):
    """--quick and --rounds for every script; extra(parser) adds its own."""
    p = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small sizes and few rounds: a smoke run, not a measurement",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"alternating rounds (default {rounds}, 2 with --quick)",
    )
    if extra:
        extra(p)
    args = p.parse_args()
    if args.rounds is None:
        args.rounds = 2 if args.quick else rounds
    return args


# The page sizes of the fault benchmarks, by their shift.
FAULT_PAGES = {"4KB": 12, "2MB": 21, "1GB": 30}


def fault_page_args(p):
    """--pages and --reserve, for the benchmarks that fault each page size in (an extra=)."""
    p.add_argument("--pages", default="4KB,2MB,1GB", help="page sizes (default 4KB,2MB,1GB)")
    p.add_argument(
        "--reserve",
        action="store_true",
        help="as root, reserve the hugepages the run needs and restore the pools after",
    )


def import_pagezero():
    try:
        import pagezero
    except ImportError as e:
        sys.exit(
            f"cannot import pagezero with {sys.executable} ({e}); "
            "run `pip install -e .` in the repository first"
        )
    return pagezero


def median(xs):
    return statistics.median(xs)


def loop_rate(result, size):
    """Median over the loops of one Result of size/seconds. The median of the
    per-loop rates, not total/total, so one interrupted loop does not count."""
    return median(size / s for s in result.seconds)


def alternate(tasks, rounds, label=""):
    """Run each of tasks {name: callable -> float} once per round, rotating
    the order every round; return {name: [value per round]}."""
    names = list(tasks)
    out = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            out[n].append(tasks[n]())
        print(f"  {label} round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    return out


def run_numbers(cmd):
    """Run a command; return the numbers it prints on lines not starting with
    '#' (perf's and pagezero's --format simple print bytes/sec that way)."""
    # From benchmarks/, not the repository root: `python -m` puts its working
    # directory first on sys.path, and the root's pagezero/ is the unbuilt source.
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return [
        float(line)
        for line in p.stdout.split()
        if line and not line.startswith("#") and _is_number(line)
    ]


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def gbps(rate):
    return f"{rate / 1e9:8.2f}"


def size_str(n):
    for unit, mult in (("GB", GB), ("MB", MB), ("KB", KB)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{unit}"
    return f"{n}B"


def table(headers, rows):
    rows = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(f"{{:>{w}}}" for w in widths)
    print(line.format(*headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line.format(*r))


def header(title, args):
    print(
        f"{title}  (rounds={args.rounds}{', quick' if args.quick else ''}; "
        f"medians of alternating rounds; GB/s = 10^9 bytes/s; "
        f"load average at start {os.getloadavg()[0]:.2f})"
    )


def verdict(ok, message):
    """Print the final PASS/FAIL line and exit 0/1."""
    print(f"{'PASS' if ok else 'FAIL'} {message} (load average at end {os.getloadavg()[0]:.2f})")
    sys.exit(0 if ok else 1)
