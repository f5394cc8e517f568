"""The TLB's share: the same kernels clearing 1GB on 4KB pages and on 2MB pages.

The kernel clears pages through its direct map, mapped with 2MB and 1GB
pages, so clear_pages() pays almost no TLB misses. A user-space buffer on
4KB pages pays one every 4KB once it outgrows the L2 TLB's reach (a few MB).
Each kernel clears a 1GB buffer in one call per loop, on 4KB pages (THP
refused) and on 2MB pages (hugetlb when the pool has 512 free pages, else
transparent huge pages asked with MADV_HUGEPAGE, their share checked in
smaps), the two page sizes alternating round by round.

Information only: no target, so no PASS/FAIL. The ratio column is the TLB's
cost as the kernel would not pay it; a kernel whose ranking changes between
the columns is one that a 4KB study would misjudge.
"""

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
)

# The x86-64 string ops, the unrolled loop and the widest streaming stores
# this CPU has; the arm64 kernels where they are the ones available.
FUNCTIONS = (
    "x86-64-stosb",
    "x86-64-stosq",
    "x86-64-unrolled",
    "x86-64-movnti",
    "x86-64-avx-nt",
    "x86-64-avx512-nt",
    "x86-64-clzero",
    "arm64-dczva",
    "arm64-stp",
    "arm64-stnp",
)


def main():
    args = parse_args(__doc__)
    pz = import_pagezero()
    from pagezero.system.backing import kernel_backing

    size, loops = (256 * MB, 3) if args.quick else (1 * GB, 5)
    usable = {k.name for k in pz.kernels("clear") if k.available}
    functions = [f for f in FUNCTIONS if f in usable] or ["default"]
    huge = kernel_backing(size)
    pages = {"4KB": {"page": "4KB", "thp": False}, huge.label: huge.region_args()}
    header(
        f"clearing {size_str(size)} in one call per loop, {loops} loops, 4KB pages vs {huge.label}",
        args,
    )
    if huge.note:
        print(f"# {huge.note}")
    rows = []
    for f in functions:
        res = alternate(
            {
                name: lambda kw=kw, f=f: loop_rate(
                    pz.memset(size=size, function=f, loops=loops, **kw)[0], size
                )
                for name, kw in pages.items()
            },
            args.rounds,
            label=f,
        )
        small, big = median(res["4KB"]), median(res[huge.label])
        rows.append([f, gbps(small), gbps(big), f"{big / small:.2f}x"])
    table(["kernel", "4KB GB/s", f"{huge.label} GB/s", "2MB/4KB"], rows)
    by = {
        "4KB": sorted(rows, key=lambda r: -float(r[1]))[0][0],
        "2MB": sorted(rows, key=lambda r: -float(r[2]))[0][0],
    }
    print(f"fastest on 4KB pages: {by['4KB']}; on 2MB pages: {by['2MB']}")


if __name__ == "__main__":
    main()
