"""Clearing policies: the LLC knee of clear_pages()' kernel, and what each
folio_zero_user() order leaves in cache for the faulting access.

1. Knee: clear a 1GB region with x86-64-stosb in batches of 4MB..256MB
   (each extent one call; extents alternate round by round) and find the
   knee as `pagezero advise` does (a one-step fit of log rate). On AMD Zen
   a rep stosb longer than about the LLC stops allocating cache lines, so
   the knee should sit near the LLC (32 MiB on these machines).
   Target: 16 MiB <= knee <= 64 MiB.

2. Touch: clear a 2MB folio (4KB pages, THP refused) with each strategy,
   fault at page 0, then time a read-then-write of every line of the fault
   neighbourhood (pages 0..2), each load's address depending on the last,
   against the same touch after clflush (the cold baseline). Strategies
   alternate round by round; each round is the median of 20 clears.
   Target: the touch after neighbourhood-last <= 0.8x the touch after
   sequential (the neighbourhood cleared last is still in cache; cleared
   first, 2MB of stores later it is not).
"""

from _common import (
    GB,
    MB,
    alternate,
    gbps,
    header,
    import_pagezero,
    median,
    parse_args,
    size_str,
    table,
    verdict,
)

KNEE_KERNEL = "x86-64-stosb"
KNEE_RANGE = (16 * MB, 64 * MB)
TOUCH_TARGET = 0.8


def knee(pz, args):
    from pagezero.analysis.knee import find_knee
    from pagezero.measure.policy import plan_batch, run_batch

    size, passes = (256 * MB, 2) if args.quick else (1 * GB, 3)
    extents = [4 * MB, 8 * MB, 16 * MB, 24 * MB, 32 * MB, 48 * MB, 64 * MB, 128 * MB]
    if not args.quick:
        extents.append(256 * MB)
    plans = {e: plan_batch(size, e, KNEE_KERNEL, loops=passes) for e in extents}
    with pz.region(size, thp=False) as reg:
        res = alternate(
            {size_str(e): lambda e=e: median(run_batch(plans[e], reg).rates) for e in extents},
            args.rounds,
            "knee",
        )
    med = {e: median(res[size_str(e)]) for e in extents}
    k, step = find_knee(med.items())
    print(
        f"\n{KNEE_KERNEL}: clearing {size_str(size)} in batches of each extent "
        f"({passes} passes per round)"
    )
    table(
        ["extent", "median GB/s", "min", "max", "extent/median ms"],
        [
            [
                size_str(e),
                gbps(med[e]),
                gbps(min(res[size_str(e)])),
                gbps(max(res[size_str(e)])),
                f"{e / med[e] * 1e3:.3f}",
            ]
            for e in extents
        ],
    )
    return k, step


def touch(pz, args):
    from pagezero.measure.policy import STRATEGIES, FolioMemory, plan_folio, run_folio

    loops = 5 if args.quick else 20
    plans = {s: plan_folio("2MB", s, fault_index=0, loops=loops, backing="4KB") for s in STRATEGIES}
    mem = FolioMemory(2 * MB, "4KB")
    try:
        res = alternate(
            {s: lambda s=s: run_folio(plans[s], mem) for s in STRATEGIES}, args.rounds, "touch"
        )
    finally:
        mem.close()
    touch_ns = {s: median(r.touch_ns_per_line for r in res[s]) for s in STRATEGIES}
    cold_ns = {s: median(r.cold_ns_per_line for r in res[s]) for s in STRATEGIES}
    rate = {s: median(r.clear_bytes_per_sec for r in res[s]) for s in STRATEGIES}
    r0 = res[STRATEGIES[0]][0]
    print(
        f"\n2MB folio ({r0.backing} pages), fault at page 0, {r0.function}, "
        f"non-temporal {plans['nocache-except-target'].nt_kernel}; touch of pages 0..2 "
        f"({r0.touch_lines} lines); cold: after {r0.cold_method}; {loops} clears per round"
    )
    table(
        ["strategy", "clear GB/s", "touch ns/line", "cold ns/line", "touch/cold", "touch min..max"],
        [
            [
                s,
                gbps(rate[s]),
                f"{touch_ns[s]:.2f}",
                f"{cold_ns[s]:.2f}",
                f"{touch_ns[s] / cold_ns[s]:.2f}",
                f"{min(r.touch_ns_per_line for r in res[s]):.2f}.."
                f"{max(r.touch_ns_per_line for r in res[s]):.2f}",
            ]
            for s in STRATEGIES
        ],
    )
    return touch_ns


def main():
    args = parse_args(__doc__)
    pz = import_pagezero()
    if KNEE_KERNEL not in [k.name for k in pz.kernels() if k.available]:
        print(f"{KNEE_KERNEL} is not available on this machine: nothing to measure")
        raise SystemExit(2)
    from pagezero.system.machine import llc_bytes

    llc = llc_bytes()
    header("clearing policies: the LLC knee and the fault-neighbourhood touch", args)
    k, step = knee(pz, args)
    t = touch(pz, args)
    ratio = t["neighbourhood-last"] / t["sequential"]
    knee_ok = KNEE_RANGE[0] <= k <= KNEE_RANGE[1]
    touch_ok = ratio <= TOUCH_TARGET
    print()
    verdict(
        knee_ok and touch_ok,
        f"knee of {KNEE_KERNEL} at {size_str(k)} (step {step:.2f}x; LLC "
        f"{size_str(llc) if llc else 'unknown'}; target {size_str(KNEE_RANGE[0])}.."
        f"{size_str(KNEE_RANGE[1])}: {'ok' if knee_ok else 'missed'}); touch after "
        f"neighbourhood-last / after sequential = {ratio:.2f}x (target <= {TOUCH_TARGET}x: "
        f"{'ok' if touch_ok else 'missed'})",
    )


if __name__ == "__main__":
    main()
