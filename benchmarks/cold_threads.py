"""Cache state and several CPUs: the conditions the 2012 reviewers asked for.

1. Hot vs cold: clearing one extent per call, the same buffer every loop
   (hot, perf's conditions) or with the extent flushed from the caches
   before each timed call (cold: clflushopt, outside the timing). Small
   extents are served from L1/L2 when hot; a page fault's page is cold.
2. 1 vs 2 (.. N) threads clearing disjoint parts of one 1GB region, each
   pinned to its own CPU, started together: aggregate rate.

The extents are timed with the tsc clock: a 4KB clear takes tens of ns,
below what CLOCK_MONOTONIC_RAW resolves on a VM.

Information only: no target, so no PASS/FAIL. Rates are medians over the
loops of each run, medians again over alternating rounds.
"""

import os

from _common import (
    GB,
    KB,
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
)

EXTENTS = [4 * KB, 64 * KB, 2 * MB, 32 * MB]
FUNCTIONS = ["x86-64-stosb", "x86-64-avx512-nt"]


def main():
    args = parse_args(__doc__)
    pz = import_pagezero()
    usable = {k.name for k in pz.kernels("clear") if k.available}
    functions = [f for f in FUNCTIONS if f in usable] or ["default"]
    rounds = args.rounds
    header("hot vs cold clearing, one extent per call", args)
    rows = []
    for f in functions:
        for extent in EXTENTS:
            # Enough loops for ~tens of ms per run at ~50 GB/s.
            loops = max(5, min(20000, (256 * MB) // extent)) // (8 if args.quick else 1) or 5
            res = alternate(
                {
                    c: lambda c=c, f=f, extent=extent, loops=loops: loop_rate(
                        pz.memset(size=extent, function=f, loops=loops, cache=c, clock="tsc")[0],
                        extent,
                    )
                    for c in ("hot", "cold")
                },
                rounds,
            )
            hot, cold = median(res["hot"]), median(res["cold"])
            rows.append([f, size_str(extent), gbps(hot), gbps(cold), f"{hot / cold:.2f}x"])
    table(["function", "extent", "hot GB/s", "cold GB/s", "hot/cold"], rows)

    size = 256 * MB if args.quick else 1 * GB
    cpus = len(os.sched_getaffinity(0))
    counts = sorted({1, 2, cpus} & set(range(1, cpus + 1)))
    print()
    header(f"threads clearing one {size_str(size)} region (shared), {functions[0]}", args)
    res = alternate(
        {
            n: lambda n=n: (
                pz.memset(size=size, function=functions[0], loops=5, threads=n)[0].bytes_per_sec
            )
            for n in counts
        },
        rounds,
    )
    base = median(res[1])
    table(
        ["threads", "aggregate GB/s", "min", "max", "vs 1"],
        [
            [
                n,
                gbps(median(res[n])),
                gbps(min(res[n])),
                gbps(max(res[n])),
                f"{median(res[n]) / base:.2f}x",
            ]
            for n in counts
        ],
    )


if __name__ == "__main__":
    main()
