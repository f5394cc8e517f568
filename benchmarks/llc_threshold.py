"""The LLC threshold: clearing 1GB with rep stosb in one call vs in 8MB calls.

On AMD Zen, a single rep stosb longer than about the LLC size stops
allocating cache lines (the stores stream to memory); 8MB calls, below the
threshold, each pull their lines through the cache. This is why the kernel's
clear batch (8MB in the folio_zero_user series, 32MB as merged) matters.
1GB chunk and 8MB chunk alternate, round by round; 32MB (= LLC here) is
shown for information.

Target: 1GB-chunk rate >= 1.5x the 8MB-chunk rate.
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
    verdict,
)

TARGET = 1.5
FUNCTION = "x86-64-stosb"


def main():
    args = parse_args(__doc__)
    pz = import_pagezero()
    # --quick: 256MB is still 8x the LLC, so one call stays above the threshold.
    size, loops = (256 * MB, 3) if args.quick else (1 * GB, 10)
    chunks = {"whole": size, "8MB": 8 * MB, "32MB": 32 * MB}
    header(f"clearing {size_str(size)} with {FUNCTION}, {loops} loops, by chunk size", args)
    res = alternate(
        {
            name: lambda c=c: loop_rate(
                pz.memset(size=size, chunk=c, loops=loops, function=FUNCTION, value=0)[0], size
            )
            for name, c in chunks.items()
        },
        args.rounds,
    )
    med = {n: median(v) for n, v in res.items()}
    table(
        ["chunk", "median GB/s", "min", "max", "vs 8MB"],
        [
            [
                size_str(chunks[n]),
                gbps(med[n]),
                gbps(min(res[n])),
                gbps(max(res[n])),
                f"{med[n] / med['8MB']:.2f}x",
            ]
            for n in chunks
        ],
    )
    ratio = med["whole"] / med["8MB"]
    verdict(
        ratio >= TARGET,
        f"{size_str(size)}-chunk / 8MB-chunk = {ratio:.2f}x "
        f"(target >= {TARGET}x; 32MB chunk {med['32MB'] / med['8MB']:.2f}x, information)",
    )


if __name__ == "__main__":
    main()
