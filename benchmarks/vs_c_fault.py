"""pagezero's fault workloads vs an independent plain C program (ref/fault_loop.c).

For 4KB (THP refused), 2MB and 1GB (hugetlb) pages and the demand and
populate workloads, over 1GB: pagezero.faults() in this process and the C
program (compiled here, now) take turns, round by round. Both time mmap plus
faulting every page per loop with CLOCK_MONOTONIC_RAW, munmap outside the
timing, and report the median over loops of size/seconds. A warm-up turn of
each, untimed, comes first (see the comment in main()).

Then, for information, the headroom per page size: the demand fault rate
beside the best pagezero clear kernel over the same 1GB in page-sized calls.

2MB and 1GB pages need free hugepages: --reserve (as root) grows the pools by
what is missing for the run and gives it back afterwards, also on Ctrl-C.
Without enough free pages a page size is skipped, saying why.

Target: pagezero within 10% of the C program (0.90 <= ratio <= 1.10) for
every page size and workload measured.
"""

import contextlib
import math
import os
import subprocess
import sys
import tempfile

from _common import (
    GB,
    MB,
    alternate,
    gbps,
    header,
    import_pagezero,
    loop_rate,
    median,
    parse_args,
    size_str,
    table,
    verdict,
)

LOW, HIGH = 0.90, 1.10
HERE = os.path.dirname(os.path.abspath(__file__))
PAGES = {"4KB": 12, "2MB": 21, "1GB": 30}
WORKLOADS = ("demand", "populate")


def compile_ref(tmp):
    exe = os.path.join(tmp, "fault_loop")
    subprocess.run(["gcc", "-O2", "-o", exe, os.path.join(HERE, "ref", "fault_loop.c")], check=True)
    return exe


def extra(p):
    p.add_argument(
        "--reserve",
        action="store_true",
        help="as root, reserve the hugepages the run needs and restore the pools after",
    )
    p.add_argument("--no-headroom", action="store_true", help="skip the headroom figures")


def main():
    args = parse_args(__doc__, extra=extra)
    pz = import_pagezero()
    from pagezero.measure import fault
    from pagezero.system import hugepages

    size = 256 * MB if args.quick else 1 * GB
    loops = 3 if args.quick else 10
    sizes = {page: max(size, 1 << shift) for page, shift in PAGES.items()}
    header(f"pagezero faults vs plain C mmap/touch/munmap ({loops} loops per sample)", args)

    rows, bad, skipped, demand = [], [], [], {}
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        exe = compile_ref(tmp)
        usable = []
        for page, shift in PAGES.items():
            need = sizes[page] >> shift if shift != 12 else 0
            try:
                if need and args.reserve:
                    stack.enter_context(hugepages.reserve(page, need))
                elif need:
                    hugepages.check_available(page, need)
                usable.append(page)
            except (OSError, pz.PagezeroError) as e:
                skipped.append(f"{page}: {e}")
                print(f"  skipping {page} pages: {e}", file=sys.stderr)

        for page in usable:
            n = sizes[page]
            for workload in WORKLOADS:

                def pz_task(page=page, workload=workload, n=n):
                    try:
                        r = pz.faults(n, page=page, function=workload, loops=loops)[0]
                    except (OSError, pz.PagezeroError) as e:
                        print(f"  pagezero {page} {workload}: {e}", file=sys.stderr)
                        return math.nan
                    if workload == "demand":
                        demand[page] = r
                    return loop_rate(r, n)

                def c_task(page=page, workload=workload, n=n):
                    # A failed mmap (someone shrank the pool meanwhile: it is
                    # shared) loses this round, not the whole run.
                    p = subprocess.run(
                        [exe, str(n), str(PAGES[page]), workload, str(loops)],
                        capture_output=True,
                        text=True,
                    )
                    if p.returncode:
                        print(f"  C {page} {workload}: {p.stderr.strip()}", file=sys.stderr)
                        return math.nan
                    return float(p.stdout)

                # One untimed turn each first: on these VMs the first touch of
                # guest memory since boot also faults on the host, several times
                # slower, and the pages a pool or the allocator hands out may be
                # such pages. After it, both sides reuse the same warm pages.
                c_task(), pz_task()
                res = alternate(
                    {"C": c_task, "pagezero": pz_task}, args.rounds, f"{page} {workload}"
                )
                c, p = (
                    median([x for x in res[k] if not math.isnan(x)] or [math.nan])
                    for k in ("C", "pagezero")
                )
                ratio = p / c
                rows.append([page, workload, size_str(n), gbps(c), gbps(p), f"{ratio:.3f}"])
                if not LOW <= ratio <= HIGH:  # NaN (every round failed) counts as outside
                    bad.append(f"{page} {workload} {ratio:.3f}")

        head = []
        if not args.no_headroom:
            for page in usable:
                r = demand.get(page)
                if r is None:
                    continue
                try:
                    clears = fault.measure_headroom(r)
                except (OSError, pz.PagezeroError) as e:
                    print(f"  headroom {page}: {e}", file=sys.stderr)
                    continue
                h = fault.Headroom(r, clears)
                best = h.best
                head.append(
                    [
                        page,
                        gbps(loop_rate(r, sizes[page])),
                        best.function,
                        gbps(loop_rate(best, sizes[page])),
                        f"{loop_rate(best, sizes[page]) / loop_rate(r, sizes[page]):.2f}x",
                    ]
                )

    print()
    table(["page", "workload", "size", "C GB/s", "pagezero GB/s", "pagezero/C"], rows)
    if head:
        print(
            "\nheadroom: demand faults vs the best user-space clear of page-sized extents "
            "(same size, same page size, median of loops)"
        )
        table(["page", "faults GB/s", "best kernel", "clear GB/s", "headroom"], head)
    if skipped:
        print("\nskipped: " + "; ".join(skipped))
    if not rows:
        print("nothing measured")
        sys.exit(2)
    verdict(
        not bad,
        f"pagezero within {LOW:.2f}..{HIGH:.2f} of the C program for "
        f"{len(rows) - len(bad)}/{len(rows)} cases"
        + (f"; outside: {', '.join(bad)}" if bad else "")
        + (f"; {len(skipped)} page size(s) skipped" if skipped else ""),
    )


if __name__ == "__main__":
    main()
