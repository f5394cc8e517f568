"""pagezero vs `perf bench mem memset`, side by side.

For each function both tools have, both clear the same size for the same
loops writing the loop index (perf's memset(dst, i, size); pagezero
--value loop), alternating the two tools round by round.

Both run as subprocesses of their command line: the most symmetric choice.
Each tool allocates, prefaults and times in its own fresh process, and each
reports total bytes / total seconds of its loops, so neither gains from a
warm process or from a different rate formula. Process start-up is outside
both tools' timed regions.

Both clear a buffer at the same alignment: perf before the 2025 series
(Debian's 6.1 among them) malloc()s its buffer, which glibc places 16 bytes
past a page boundary, and rep stosq runs several percent slower there than
on a page boundary; so pagezero runs with --offset 16 (--offset 0 for a perf
that mmap()s its buffers, as "mm: folio_zero_user: clear contiguous pages" (2025) made it do).

Target: pagezero's median rate within 5% of perf's for every function.
"""

import shutil
import subprocess
import sys

from _common import (
    GB,
    MB,
    alternate,
    gbps,
    header,
    import_pagezero,
    median,
    parse_args,
    run_numbers,
    size_str,
    table,
    verdict,
)

TOLERANCE = 0.05


def perf_functions():
    """perf's memset functions, from `perf bench mem memset -f help`, or None
    if perf is not usable (missing, or Debian's wrapper without the matching
    linux-perf package)."""
    if not shutil.which("perf"):
        return None
    p = subprocess.run(
        ["perf", "bench", "mem", "memset", "-f", "help"], capture_output=True, text=True
    )
    names = [
        line.split()[0] for line in p.stdout.splitlines() if line.startswith("\t") and "..." in line
    ]
    return names or None


def main():
    args = parse_args(
        __doc__,
        extra=lambda p: p.add_argument(
            "--offset",
            type=int,
            default=16,
            help="pagezero's buffer offset past a page boundary (default 16: perf 6.1's malloc)",
        ),
    )
    size, loops = (64 * MB, 3) if args.quick else (1 * GB, 10)
    names = perf_functions()
    if names is None:
        print(
            "perf is not available: install it (Debian: apt-get install linux-perf; "
            "Fedora: dnf install perf; Ubuntu: apt-get install linux-tools-$(uname -r))"
        )
        sys.exit(2)
    pz_names = {k.name for k in import_pagezero().kernels(kind="clear") if k.available}
    common = [n for n in names if n in pz_names]
    s, n = size_str(size), str(loops)
    header(
        f"pagezero vs perf bench mem memset, {s} x {n} loops, value=loop, "
        f"pagezero buffer offset {args.offset}",
        args,
    )

    rows, bad = [], []
    for fn in common:
        # Alternate per function, so the two tools of one function run close in time.
        res = alternate(
            {
                "perf": lambda fn=fn: run_numbers(
                    [
                        "perf",
                        "bench",
                        "--format=simple",
                        "mem",
                        "memset",
                        "-s",
                        s,
                        "-l",
                        n,
                        "-f",
                        fn,
                    ]
                )[0],
                "pagezero": lambda fn=fn: run_numbers(
                    [
                        sys.executable,
                        "-m",
                        "pagezero",
                        "mem",
                        "memset",
                        "-s",
                        s,
                        "-l",
                        n,
                        "-f",
                        fn,
                        "--value",
                        "loop",
                        "--offset",
                        str(args.offset),
                        "--format",
                        "simple",
                    ]
                )[0],
            },
            args.rounds,
            label=fn,
        )
        perf, pz = median(res["perf"]), median(res["pagezero"])
        rows.append([fn, gbps(perf), gbps(pz), f"{pz / perf:.3f}"])
        if abs(pz / perf - 1) > TOLERANCE:
            bad.append(f"{fn} {pz / perf:.3f}")
    table(["function", "perf GB/s", "pagezero GB/s", "pagezero/perf"], rows)
    skipped = [n for n in names if n not in pz_names]
    if skipped:
        print(f"perf functions pagezero lacks (not compared): {', '.join(skipped)}")
    if not common:
        verdict(False, "no function in common between perf and pagezero")
    verdict(
        not bad,
        f"pagezero within {TOLERANCE:.0%} of perf for {len(common) - len(bad)}/"
        f"{len(common)} functions" + (f"; outside: {', '.join(bad)}" if bad else ""),
    )


if __name__ == "__main__":
    main()
