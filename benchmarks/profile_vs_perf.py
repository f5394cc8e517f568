"""The profile's clearing share against perf's own sampling of the same workload.

For 4KB (THP refused), 2MB and 1GB (hugetlb) demand faults over 1GB, 10 loops, each
page written once: pagezero.faults(profile=True) in this process, and
`perf record -e cpu-clock -F 4000 -g` over the independent C program ref/fault_loop.c
(compiled here, now) doing the same (mmap, one byte written per page, munmap), take
turns round by round. perf's share is read two ways:

  perf report   `perf report --no-children --sort sym`: the clearing routines' share
                of all the program's samples, munmap and start-up included;
  timed part    from `perf script`, the samples whose call chain is a page fault or
                the mmap/madvise system call, or the program's own loop in user space:
                what pagezero samples (its sampling is enabled only around the timed
                mmap + faults), so the like-for-like figure.

The clearing routines are the profile's one table (pagezero.measure.routines.CLEARING):
its out-of-line routines, for the running kernel's clear_page() era.
perf samples the program only (not -a): on a shared machine -a would also count the
other processes' work.

2MB and 1GB pages need free hugepages: --reserve (as root) grows the pools by what is
missing and gives it back afterwards. perf must be installed (Debian: linux-perf).

Target: the profile's clearing share within 5 points of perf's over the timed part,
for every page size (medians over the rounds).
"""

import contextlib
import math
import os
import shutil
import subprocess
import sys
import tempfile

from _common import (
    FAULT_PAGES,
    GB,
    MB,
    alternate,
    fault_page_args,
    header,
    import_pagezero,
    median,
    parse_args,
    size_str,
    table,
    verdict,
)
from vs_c_fault import compile_ref

TOLERANCE = 0.05
# A sample is of the timed part when its chain holds one of these (or is the loop itself).
TIMED = {"asm_exc_page_fault", "exc_page_fault", "ksys_mmap_pgoff", "vm_mmap_pgoff"}
TIMED |= {"__x64_sys_mmap", "__arm64_sys_mmap", "do_madvise", "__x64_sys_madvise"}


def _chains(data):
    """perf script's samples of `data`: a list of call chains, leaf first, of symbol names."""
    out = subprocess.run(
        ["perf", "script", "-i", data, "-F", "ip,sym"], capture_output=True, text=True, check=True
    ).stdout
    chains, chain = [], []
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            if chain:
                chains.append(chain)
            chain = []
        else:
            chain.append(parts[1] if len(parts) > 1 else "[unknown]")
    if chain:
        chains.append(chain)
    return chains


def _report_share(data, clearing):
    """The clearing routines' share of all samples, as `perf report --sort sym` prints it."""
    out = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "sym", "-g", "none"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    share = 0.0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith("%") and parts[-1] in clearing:
            share += float(parts[0][:-1]) / 100
    return share


def perf_shares(exe, n, shift, loops, clearing, tmp):
    """(share in perf report, share over the timed part) of one perf record run."""
    data = os.path.join(tmp, "perf.data")
    cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-o", data, "--"]
    p = subprocess.run(cmd + [exe, str(n), str(shift), "demand", str(loops)], capture_output=True)
    if p.returncode:
        print(f"  perf record: {p.stderr.decode().strip()}", file=sys.stderr)
        return math.nan, math.nan
    timed = [c for c in _chains(data) if TIMED & set(c) or c[-1] == "main" or c[0] == "main"]
    clear = sum(c[0] in clearing for c in timed)
    return _report_share(data, clearing), clear / len(timed) if timed else math.nan


def main():
    args = parse_args(__doc__, rounds=3, extra=fault_page_args)
    pz = import_pagezero()
    from pagezero.measure import profile
    from pagezero.system import hugepages, kallsyms

    if not shutil.which("perf"):
        print("perf is not available: install it (Debian: apt-get install linux-perf)")
        sys.exit(2)
    why = profile.refusal()
    if why:
        print(f"sampling is refused here: {why}")
        sys.exit(2)
    # perf names symbols only: an inlined clear (7.0) is not told from its caller's work here.
    era = kallsyms.clear_era()[0]
    clearing = {s for s, r in profile.clearing_routines(era=era).items() if not r.inlined}
    size = 256 * MB if args.quick else 1 * GB
    loops = 3 if args.quick else 10
    header(f"profile's clearing share vs perf record -e cpu-clock, demand, {loops} loops", args)
    rows, bad, skipped = [], [], []
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        exe = compile_ref(tmp)
        for page in args.pages.split(","):
            shift = FAULT_PAGES[page]
            n = max(size, 1 << shift)
            need = n >> shift if shift != 12 else 0
            try:
                if need and args.reserve:
                    stack.enter_context(hugepages.reserve(page, need))
                elif need:
                    hugepages.check_available(page, need)
            except (OSError, pz.PagezeroError) as e:
                skipped.append(f"{page}: {e}")
                continue
            seen = {}

            def ours(page=page, n=n, seen=seen):
                try:
                    r = pz.faults(n, page=page, loops=loops, profile=True)[0]
                except (OSError, pz.PagezeroError) as e:
                    print(f"  pagezero {page}: {e}", file=sys.stderr)
                    return math.nan
                p = r.details["profile"]
                seen.setdefault("routines", set()).update(
                    x["symbol"] for x in p.get("clearing_routines", ())
                )
                return p.get("clearing_share", math.nan)

            def perfs(n=n, shift=shift, seen=seen):
                report, timed = perf_shares(exe, n, shift, loops, clearing, tmp)
                seen.setdefault("report", []).append(report)
                return timed

            ours(), perfs()  # the warm-up turn: the host's first touch of the pool's pages
            seen.clear()
            res = alternate({"pagezero": ours, "perf": perfs}, args.rounds, page)
            mine, theirs = (
                median([x for x in res[k] if not math.isnan(x)] or [math.nan])
                for k in ("pagezero", "perf")
            )
            report = median(seen["report"])
            diff = mine - theirs
            rows.append(
                [
                    page,
                    size_str(n),
                    ", ".join(sorted(seen.get("routines", ()))) or "-",
                    f"{mine:.1%}",
                    f"{theirs:.1%}",
                    f"{report:.1%}",
                    f"{diff * 100:+.1f}",
                ]
            )
            if not abs(diff) <= TOLERANCE:
                bad.append(f"{page} {diff * 100:+.1f} points")
    table(
        ["page", "size", "routines", "profile", "perf timed", "perf report", "points"],
        rows,
    )
    for s in skipped:
        print(f"skipped {s}")
    if not rows:
        verdict(False, "no page size could be measured")
    verdict(
        not bad,
        f"the profile's clearing share within {TOLERANCE * 100:.0f} points of perf's for "
        f"{len(rows) - len(bad)}/{len(rows)} page sizes"
        + (f"; outside: {', '.join(bad)}" if bad else ""),
    )


if __name__ == "__main__":
    main()
