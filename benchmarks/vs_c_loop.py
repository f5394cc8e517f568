"""pagezero's best clear kernel vs an independent plain C loop (ref/clear_loop.c).

The reference is compiled here, now, with the compiler's plain loop of
uint64_t stores (see ref/clear_loop.c); pagezero runs every available clear
kernel and the best median counts. The C program and pagezero's kernels
alternate, round by round.

Extents: cache-resident (4KB .. 256KB) and beyond the LLC (1GB, one call).
For a cache-resident extent E, one call of E bytes lasts tens of ns, about
the cost of the clock reads around a timed loop. So each timed loop clears a
region of half the L2 in E-sized calls (chunk=E): the data stays in cache,
a loop lasts microseconds, and the per-loop clock reads, paid equally by
both sides, cost about 1%. (A region big enough for 1ms loops would be far
beyond the LLC and measure DRAM instead.) Both sides report the median
over loops of region/seconds. The best kernel is the one with the best
median over rounds; best/C is the median over rounds of each round's own
ratio (paired: a round another process slowed counts once, not on one
side), and the rounds' range of it is shown.

Target: pagezero best >= 95% of the C loop at every extent.
"""

import math
import os
import subprocess
import sys
import tempfile

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
    verdict,
)

TARGET = 0.95
CFLAGS = "-O3 -march=native -fno-tree-loop-distribute-patterns"
HERE = os.path.dirname(os.path.abspath(__file__))


def half_l2():
    """Half the per-core L2 from sysfs (512KB if sysfs says nothing)."""
    for idx in range(8):
        base = f"/sys/devices/system/cpu/cpu0/cache/index{idx}/"
        try:
            if open(base + "level").read().strip() == "2":
                return int(open(base + "size").read().strip().rstrip("K")) * KB // 2
        except OSError:
            break
    return 512 * KB


def compile_ref(tmp, cflags):
    exe = os.path.join(tmp, "clear_loop")
    subprocess.run(
        ["gcc", *cflags.split(), "-o", exe, os.path.join(HERE, "ref", "clear_loop.c")], check=True
    )
    return exe


def main():
    args = parse_args(
        __doc__,
        extra=lambda p: p.add_argument(
            "--cflags", default=CFLAGS, help=f"flags for the C reference (default: {CFLAGS})"
        ),
    )
    pz = import_pagezero()
    kernels = [k.name for k in pz.kernels(kind="clear") if k.available]
    region = half_l2()
    cache_loops, big, big_loops = (2000, 256 * MB, 3) if args.quick else (20000, 1 * GB, 10)
    # (label, size, chunk, loops); chunk 0 = the whole region in one call.
    cases = [(size_str(e), region, e, cache_loops) for e in (4 * KB, 16 * KB, 64 * KB, 256 * KB)]
    cases.append((size_str(big), big, 0, big_loops))
    header(
        f"pagezero best clear kernel vs plain C loop ({args.cflags}); "
        f"cache extents cleared over a {size_str(region)} region",
        args,
    )

    def pz_task(name, size, chunk, loops):
        def run():
            try:
                r = pz.memset(size=size, chunk=chunk, loops=loops, function=name, value=0)[0]
            except (ValueError, OSError, pz.PagezeroError) as e:
                print(f"  {name} {size_str(size)}/{chunk}: {e}", file=sys.stderr)
                return math.nan
            return loop_rate(r, size)

        return run

    rows, per_kernel, bad = [], {k: [] for k in kernels}, []
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_ref(tmp, args.cflags)
        for label, size, chunk, loops in cases:
            tasks = {
                "C": lambda size=size, chunk=chunk, loops=loops: float(
                    subprocess.run(
                        [exe, str(size), str(chunk), str(loops)],
                        check=True,
                        capture_output=True,
                        text=True,
                    ).stdout
                )
            }
            tasks.update({k: pz_task(k, size, chunk, loops) for k in kernels})
            by_round = alternate(tasks, args.rounds, label)
            res = {n: median(v) for n, v in by_round.items()}
            for k in kernels:
                per_kernel[k].append(gbps(res[k]))
            best = max(kernels, key=lambda k: -1 if math.isnan(res[k]) else res[k])
            # Paired in rounds: a round another process slowed moves both sides of its own
            # ratio, but only one side's median of rounds (benchmarks/README.md, vs_c_loop).
            ratios = sorted(b / c for b, c in zip(by_round[best], by_round["C"]))
            ratio = median(ratios)
            spread = f"{ratios[0]:.2f}..{ratios[-1]:.2f}"
            rows.append(
                [label, size_str(size), gbps(res["C"]), best, gbps(res[best]), f"{ratio:.3f}"]
                + [spread]
            )
            if not ratio >= TARGET:
                bad.append(f"{label} {ratio:.3f}")

    print("\nall available kernels, median GB/s:")
    table(["kernel", *(c[0] for c in cases)], [[k, *v] for k, v in per_kernel.items()])
    print()
    header_row = ["extent", "region", "C loop GB/s", "best kernel", "best GB/s", "best/C"]
    table([*header_row, "rounds' best/C"], rows)
    verdict(
        not bad,
        f"pagezero best >= {TARGET:.0%} of the C loop at {len(cases) - len(bad)}/"
        f"{len(cases)} extents" + (f"; below: {', '.join(bad)}" if bad else ""),
    )


if __name__ == "__main__":
    main()
