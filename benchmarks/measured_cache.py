"""The cache a run has, measured, against an independent C loop's on this machine.

Runs pagezero.studies.cache.measure_cache() N times in a row (default 5, each a fresh
sweep of the temporal kernels over extents from twice the L2 up to the memory plateau,
every point timed once its buffer has settled), and beside each, the reference:
ref/clear_loop.c clearing the same extents on THP after one untimed clear ("warm"), the
median of many loops (a fresh buffer climbs to its rate over its first loops: the median
of 30 is past a climb of up to 15), with the plain C loop, rep stosb and rep stosq (x86-64)
as its temporal kernels; pagezero.analysis.cache reads the reference's cache from those
rates with the same rule. Per run: both caches, the first extent on the memory plateau,
the kernels that showed the fall with their cache and memory rates, and sysfs's LLC.

Target: the measured cache within a factor of two of the C loop's, in every run (both
none counts as agreeing: neither shows a fall).

    python benchmarks/measured_cache.py [--quick] [--runs N]
"""

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from _common import HERE, import_pagezero, parse_args, run_numbers, size_str, table

CFLAGS = "-O3 -march=native -fno-tree-loop-distribute-patterns"
# The C loop's temporal stores: the plain loop everywhere, rep stos on x86-64.
C_MODES = {"c-loop": "thp,warm"}
if platform.machine() == "x86_64":
    C_MODES.update({"c-stosb": "thp,warm,stosb", "c-stosq": "thp,warm,stosq"})


def c_loops(size):
    """30 loops (median past a climb of 15), fewer beyond 128MB: about 4GB of clearing."""
    return max(8, min(30, (4 << 30) // size))


def c_cache(exe, extents, info):
    """The reference's MeasuredCache: measured_cache() of the C loop's median rates (the rule
    pagezero's cache is read with; its own kernels, not pagezero's)."""
    from pagezero.analysis.cache import llc_source, measured_cache
    from pagezero.system.machine import cache_bytes, llc_bytes

    rates = {
        name: {e: run_numbers([exe, str(e), "0", str(c_loops(e)), mode])[0] for e in extents}
        for name, mode in C_MODES.items()
    }
    return measured_cache(
        rates, llc_bytes(info), llc_source(info), above_bytes=cache_bytes(info, 2) or 0
    )


def falls(cache):
    return ", ".join(
        f"{k.kernel} {k.cache_bytes_per_sec / 1e9:.1f}->{k.memory_bytes_per_sec / 1e9:.1f}"
        for k in cache.kernels
    )


def agree(a, b):
    """Both caches within a factor of two, or neither found."""
    if a is None or b is None:
        return a is None and b is None
    return max(a, b) <= 2 * min(a, b)


# A run whose sweep lost its hugepages to another process is measured again, this many times.
RETRIES = 2


def one_run(exe, info, ladder, n):
    """One measurement and its reference: (table row, whether they agree)."""
    from pagezero.studies.cache import measure_cache

    start = time.monotonic()
    cache = measure_cache(info, extents=ladder)
    seconds = time.monotonic() - start
    ref = c_cache(exe, cache.extents or ladder, info)
    same = agree(cache.cache_bytes, ref.cache_bytes)
    row = [
        n,
        f"{seconds:.0f}",
        size_str(cache.cache_bytes) if cache.cache_bytes else "none",
        size_str(ref.cache_bytes) if ref.cache_bytes else "none",
        "yes" if same else "NO",
        size_str(cache.plateau_bytes) if cache.plateau_bytes else "none",
        size_str(ref.plateau_bytes) if ref.plateau_bytes else "none",
        size_str(cache.llc_bytes) if cache.llc_bytes else "unknown",
        falls(cache) or "-",
        falls(ref) or "-",
    ]
    return row, same


def main():
    args = parse_args(
        __doc__,
        extra=lambda p: p.add_argument(
            "--runs", type=int, default=5, help="measurements in a row (default 5)"
        ),
    )
    import_pagezero()
    from pagezero.studies.cache import default_ladder
    from pagezero.system.machine import machine

    info = machine()
    ladder = default_ladder(info)
    if args.quick:
        ladder = ladder[-4:]
    rows, ok = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "clear_loop")
        subprocess.run(
            ["gcc", *CFLAGS.split(), "-o", exe, os.path.join(HERE, "ref", "clear_loop.c")],
            check=True,
        )
        for i in range(args.runs):
            row = None
            for _ in range(1 + RETRIES):
                try:
                    row, same = one_run(exe, info, ladder, i + 1)
                    break
                except RuntimeError as e:  # hugepages another process took meanwhile
                    print(f"run {i + 1}: lost ({e}); again", file=sys.stderr, flush=True)
            if row is None:
                sys.exit(f"run {i + 1} lost {1 + RETRIES} times: no verdict")
            ok += same
            rows.append(row)
            print(f"run {i + 1}/{args.runs}: " + " ".join(map(str, row)), file=sys.stderr)
    print(
        f"# measured cache against the C loop's (ref/clear_loop.c, THP, one untimed clear, "
        f"median of {c_loops(ladder[0])} loops, fewer past 128MB) and sysfs's LLC "
        f"({info['cpu_model']}); extents {size_str(ladder[0])} to {size_str(ladder[-1])}, "
        f"extended to the plateau; falls in GB/s (10^9), cache -> memory; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    table(
        [
            "run",
            "s",
            "cache",
            "C cache",
            "x2",
            "plateau",
            "C plateau",
            "sysfs LLC",
            "falls",
            "C falls",
        ],
        rows,
    )
    passed = ok == args.runs
    print(
        ("PASS" if passed else "FAIL") + f": {ok}/{args.runs} runs agree with the C loop's cache "
        f"within a factor of two (need {args.runs})"
    )
    print(f"# median seconds per measurement: {statistics.median(float(r[1]) for r in rows):.0f}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
