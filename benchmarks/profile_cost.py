"""What sampling the fault path costs the fault rate: `pagezero mem mmap --profile`
against the same command without it.

For 4KB (THP refused), 2MB and 1GB (hugetlb) demand faults over 1GB, each page
written once (--touch write), 10 loops: the two commands take turns round by round,
each a fresh process (`python -m pagezero mem mmap ... --format simple`), so both
map and fault their own buffers and neither gains from a warm process. The figure
is the ratio of the medians over the rounds, with sampling over without.

2MB and 1GB pages need free hugepages: with --reserve (as root) each command grows the
pool by what it lacks and gives it back (`mem mmap --reserve`, which faults the new
pages in once, untimed: on a VM the host faults guest memory in on its first touch),
so another process that takes the pool's free pages meanwhile costs a round, not the
page size. Without --reserve and enough free pages a page size is skipped, saying why.

Then, for information, the same pair in this process, call after call (one
placement of the buffers, so less of the between-process variation).

Target: sampling costs the rate no more than 2% (on/off >= 0.98) for every page size.
"""

import math
import sys

from _common import (
    FAULT_PAGES,
    GB,
    MB,
    alternate,
    fault_page_args,
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

FLOOR = 0.98


def command(size, page, loops, profile, reserve):
    cmd = [sys.executable, "-m", "pagezero", "mem", "mmap", "-f", "demand", "-s", size]
    cmd += ["-p", page, "-l", str(loops), "--touch", "write", "--format", "simple"]
    return cmd + ["--profile"] * profile + ["--reserve"] * (reserve and page != "4KB")


def rate(cmd):
    """The command's rate, NaN when it failed (a pool another process shrank meanwhile)."""
    try:
        return run_numbers(cmd)[0]
    except RuntimeError as e:
        print(f"  {e}", file=sys.stderr)
        return math.nan


def main():
    args = parse_args(__doc__, rounds=7, extra=fault_page_args)
    pz = import_pagezero()
    from pagezero.measure import profile
    from pagezero.system import hugepages

    why = profile.refusal()
    if why is None:
        refused = pz.faults("4MB", loops=1, profile=True)[0].details["profile"].get("refused")
        why = refused
    if why:
        print(f"sampling is refused here: {why}")
        sys.exit(2)
    size = 256 * MB if args.quick else 1 * GB
    loops = 3 if args.quick else 10
    header(f"faults with and without --profile, demand, {loops} loops per run", args)
    rows, bad, skipped = [], [], []
    for page in args.pages.split(","):
        shift = FAULT_PAGES[page]
        n = max(size, 1 << shift)
        need = n >> shift if shift != 12 else 0
        if need and not args.reserve:
            try:
                hugepages.check_available(page, need)
            except (OSError, pz.PagezeroError) as e:
                skipped.append(f"{page}: {e}")
                continue
        on, off = (command(size_str(n), page, loops, p, args.reserve) for p in (True, False))
        rate(on), rate(off)  # the warm-up turn
        tasks = {"on": lambda on=on: rate(on), "off": lambda off=off: rate(off)}
        res = alternate(tasks, args.rounds, page)
        r_on, r_off = (
            median([x for x in res[k] if not math.isnan(x)] or [math.nan]) for k in ("on", "off")
        )
        ratio = r_on / r_off

        def here(profile, page=page, n=n):
            r = pz.faults(n, page=page, loops=loops, profile=profile, reserve=args.reserve)
            return r.bytes_per_sec

        here(True), here(False)
        same = alternate({"on": lambda: here(True), "off": lambda: here(False)}, args.rounds, page)
        inside = median(same["on"]) / median(same["off"])
        rows.append([page, size_str(n), gbps(r_off), gbps(r_on), f"{ratio:.3f}", f"{inside:.3f}"])
        if not ratio >= FLOOR:
            bad.append(f"{page} {ratio:.3f}")
    table(["page", "size", "off GB/s", "on GB/s", "on/off", "in one process"], rows)
    for s in skipped:
        print(f"skipped {s}")
    if not rows:
        verdict(False, "no page size could be measured")
    verdict(
        not bad,
        f"sampling costs at most {1 - FLOOR:.0%} of the rate for {len(rows) - len(bad)}/"
        f"{len(rows)} page sizes" + (f"; more: {', '.join(bad)}" if bad else ""),
    )


if __name__ == "__main__":
    main()
