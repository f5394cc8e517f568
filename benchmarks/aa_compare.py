"""How often `pagezero compare` flags identical runs (A/A), and whether it finds a real
difference (A/B: a busy process sharing the benchmark's CPU, against quiet).

Information and one target: N quiet results of
`pagezero mem memset -s 256MB -l 10 -f x86-64-stosb --runs 5 -o qN.json` (each
result five fresh processes) and N with a CPU hog (a busy loop pinned to the same
CPU as the benchmark), measured alternately (quiet, hog, quiet, ...) so drift
spreads over both; every process of both pinned to that one CPU. Then every pair
of quiet results is compared as `pagezero compare` does (all N*(N-1)/2 pairs: 28
for 8), and every hog result against every quiet one (N*N pairs). Printed: each
result's centre and spread between runs, the pairs flagged (R)/(I) among the
quiet ones (the false positives), and the hog pairs found (R).
Before the run was the unit, 6 of 28 quiet pairs were flagged on the EPYC VM at
a nominal alpha of 0.01 (loops taken as samples).

    python benchmarks/aa_compare.py [--rounds N] [--runs R] [--quick] [--keep DIR]
    python benchmarks/aa_compare.py --from DIR     # compare the q*.json and h*.json in DIR again
    python benchmarks/aa_compare.py --dry-run      # the commands, nothing measured

Target: at most alpha x the quiet pairs flagged (rounded up: 1 of 28 at alpha
0.01), and every hog pair found.
"""

import glob
import itertools
import math
import os
import subprocess
import sys
import tempfile

from _common import HERE, import_pagezero, parse_args, table, verdict

FULL = {"size": "256MB", "loops": 10, "runs": 5}
QUICK = {"size": "64MB", "loops": 5, "runs": 3}


def options(p):
    p.add_argument(
        "--runs",
        type=int,
        default=None,
        help="processes per result (--runs of pagezero; default 5, 3 with --quick)",
    )
    p.add_argument("--function", default="x86-64-stosb")
    p.add_argument("--alpha", type=float, default=0.01)
    p.add_argument("--threshold", type=float, default=2.0, help="percent (default 2)")
    p.add_argument(
        "--cpu",
        type=int,
        default=None,
        help="the CPU both the benchmark and the hog run on (default: the last allowed)",
    )
    p.add_argument(
        "--keep", metavar="DIR", help="write the results here (default: a temporary folder)"
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="measure nothing: compare the q*.json (quiet) and h*.json (hog) in DIR",
    )
    p.add_argument("--dry-run", action="store_true", help="print the commands and stop")


def settings(args):
    s = dict(QUICK if args.quick else FULL)
    if args.runs is not None:
        s["runs"] = args.runs
    if args.rounds < 2:
        sys.exit("aa_compare: --rounds must be 2 or more (pairs need two results)")
    return s


def command(s, function, out):
    return [
        sys.executable,
        "-m",
        "pagezero",
        "mem",
        "memset",
        "-s",
        s["size"],
        "-l",
        str(s["loops"]),
        "-f",
        function,
        "--runs",
        str(s["runs"]),
        "-o",
        out,
    ]


def plan(args, folder):
    """[(kind, command)]: quiet and hog alternately, `rounds` of each."""
    s = settings(args)
    steps = []
    for i in range(1, args.rounds + 1):
        for kind in ("q", "h"):
            steps.append((kind, command(s, args.function, os.path.join(folder, f"{kind}{i}.json"))))
    return steps


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def measure(steps, cpu):
    for n, (kind, cmd) in enumerate(steps, 1):
        hog = None
        if kind == "h":
            hog = subprocess.Popen(
                [sys.executable, "-c", "while True: pass"], preexec_fn=pinned(cpu)
            )
        try:
            # From benchmarks/: the repository root's pagezero/ is the unbuilt source.
            p = subprocess.run(
                cmd, capture_output=True, text=True, cwd=HERE, preexec_fn=pinned(cpu)
            )
        finally:
            if hog:
                hog.kill()
                hog.wait()
        if p.returncode:
            sys.exit(f"aa_compare: {' '.join(cmd[1:])} failed ({p.returncode}): {p.stderr.strip()}")
        print(
            f"  {n}/{len(steps)} {'hog  ' if hog else 'quiet'} {os.path.basename(cmd[-1])}",
            file=sys.stderr,
            flush=True,
        )


def load(folder):
    """({name: ResultSet} quiet, {name: ResultSet} hog) from q*.json and h*.json."""
    from pagezero.results.resultset import load_path

    def kind(prefix):
        paths = sorted(
            glob.glob(os.path.join(folder, f"{prefix}*.json")), key=lambda p: (len(p), p)
        )
        return {os.path.basename(p): load_path(p) for p in paths}

    return kind("q"), kind("h")


def quiet_pairs(names):
    """Every pair of quiet results, each once: N*(N-1)/2."""
    return list(itertools.combinations(names, 2))


def hog_pairs(quiet, hog):
    """Every hog result against every quiet one (quiet the base): N*M."""
    return list(itertools.product(quiet, hog))


def changes(sets, pairs, threshold_pct, alpha):
    """[(base, other, change_pct, marker, runs)] of the points each pair shares."""
    from pagezero.analysis.compare import compare

    out = []
    for a, b in pairs:
        for row in compare(sets[a], sets[b], threshold=threshold_pct / 100, alpha=alpha):
            c = row["changes"][0]
            if c is not None:
                out.append((a, b, c["change_pct"], c["marker"], c["runs"]))
    return out


def summary_rows(sets):
    from pagezero.results.points import summarize_points

    rows = []
    for name, rs in sets.items():
        for _, s in summarize_points(rs).values():
            rows.append(
                [
                    name,
                    f"{s['median'] / 1e9:.2f}",
                    f"{s['spread_pct']:.1f}%",
                    f"{s['runs']} {s['spread_of']}",
                ]
            )
    return rows


def report(quiet, hog, threshold, alpha):
    """Print the figures; returns (flagged, quiet pairs, found, hog pairs)."""
    table(["result", "GB/s", "spread", "of"], summary_rows({**quiet, **hog}))
    aa = changes(quiet, quiet_pairs(list(quiet)), threshold, alpha)
    flagged = [c for c in aa if c[3] in ("(R)", "(I)")]
    few = sum(1 for c in aa if min(c[4]) < 3)
    print(
        f"\nA/A: {len(flagged)} of {len(aa)} quiet pairs flagged (R)/(I) "
        f"(alpha {alpha:g}, threshold {threshold:g}%)"
        + (f"; {few} pairs with fewer than 3 runs a side, never flagged" if few else "")
    )
    for a, b, pct, marker, _ in flagged:
        print(f"  {a} vs {b}: {pct:+.1f}% {marker}")
    spread = sorted(abs(c[2]) for c in aa)
    if spread:
        print(
            f"  |change| between quiet results: median {spread[len(spread) // 2]:.1f}%, "
            f"largest {spread[-1]:.1f}%"
        )
    ab = changes({**quiet, **hog}, hog_pairs(list(quiet), list(hog)), threshold, alpha)
    found = [c for c in ab if c[3] == "(R)"]
    print(f"A/B: {len(found)} of {len(ab)} hog-vs-quiet pairs found (R)")
    if ab:
        pcts = sorted(c[2] for c in ab)
        print(
            f"  change with the hog: median {pcts[len(pcts) // 2]:+.1f}% "
            f"({pcts[0]:+.1f}% .. {pcts[-1]:+.1f}%)"
        )
    return len(flagged), len(aa), len(found), len(ab)


def main():
    args = parse_args(__doc__, rounds=8, extra=options)
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    if args.source:
        folder = args.source
    else:
        folder = args.keep or tempfile.mkdtemp(prefix="pagezero-aa-")
        os.makedirs(folder, exist_ok=True)
        steps = plan(args, folder)
        if args.dry_run:
            for kind, cmd in steps:
                print((f"hog on CPU {cpu:d} + " if kind == "h" else "") + " ".join(cmd[1:]))
            return
        import_pagezero()
        s = settings(args)
        print(
            f"aa_compare: {args.rounds} quiet and {args.rounds} hog results of `pagezero mem "
            f"memset -s {s['size']} -l {s['loops']} -f {args.function} --runs {s['runs']}`, "
            f"alternating, pinned to CPU {cpu}; results in {folder}"
        )
        measure(steps, cpu)
    import_pagezero()
    quiet, hog = load(folder)
    if len(quiet) < 2:
        sys.exit(
            f"aa_compare: {folder} holds {len(quiet)} quiet results (q*.json); 2 or more needed"
        )
    flagged, pairs, found, ab = report(quiet, hog, args.threshold, args.alpha)
    allowed = math.ceil(args.alpha * pairs)
    verdict(
        flagged <= allowed and found == ab,
        f"{flagged} of {pairs} quiet pairs flagged (target at most {allowed}); "
        f"{found} of {ab} hog pairs found (target all)",
    )


if __name__ == "__main__":
    main()
