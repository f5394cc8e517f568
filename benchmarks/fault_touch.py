"""perf's touch against a write only: what `mem mmap` (perf's access) and the studies
(one write per page) measure of the same demand faults.

perf bench mem mmap touches each page with `*p = *p + i`. Compiled as perf's compiler
compiles it, on x86-64 that is one read-modify-write add, a single write fault per page; on
arm64 (or a perf built at -O0) a load then a store: a read fault that maps the shared zero
page, then a write fault that allocates and clears a new page (hugetlb has no zero page: its
read fault clears the folio). pagezero's studies of the kernel's clearing write
one byte per page. Both touches fault the same region, 4KB pages (THP refused) and, where
the 2MB pool has the pages, 2MB hugetlb, alternating round by round.

Information only: no target, so no PASS/FAIL. A perf/write ratio near 1.00 says that
`mem mmap` and the studies measure the same fault path on this CPU; well below 1 that
perf's figure carries a second fault per page.
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


def main():
    args = parse_args(__doc__)
    pz = import_pagezero()

    size, loops = (256 * MB, 3) if args.quick else (1 * GB, 5)
    pages = ["4KB"]
    try:
        if pz.hugepage_pools()["2MB"].available >= size // (2 * MB):
            pages.append("2MB")
    except KeyError:
        pass
    header(f"demand faults over {size_str(size)}, {loops} loops, perf's touch vs a write", args)
    if pages == ["4KB"]:
        print("# 2MB hugetlb left out: the 2MB pool lacks the pages (pagezero mem mmap --reserve)")
    rows = []
    for page in pages:
        res = alternate(
            {
                touch: lambda touch=touch, page=page: loop_rate(
                    pz.faults(size=size, page=page, loops=loops, touch=touch)[0], size
                )
                for touch in ("write", "perf")
            },
            args.rounds,
            label=page,
        )
        write, perf = median(res["write"]), median(res["perf"])
        rows.append([page, gbps(write), gbps(perf), f"{perf / write:.2f}"])
    table(["page", "write GB/s", "perf GB/s", "perf/write"], rows)


if __name__ == "__main__":
    main()
