"""Does `pagezero advise` give the same answer when nothing has changed?

Runs `python -m pagezero advise --format json` N times in a row (default 5), each
as a user would, and prints one row per run: the knee, the batch and kernel per
budget, the kernel for the 4KB and 128MB extents (the best-kernel range holding
them), and how many alternatives each answer was tied with. Then, per answer, how
many runs gave the most common value.

Target (the acceptance of "advice without coin tosses"): the same knee in every
run (null where the step is not clear: an Intel Xeon VM's 5 of 5), and a knee that
is there within half to twice the cache in every run (AMD Zen 4's, near its 32 MiB
LLC), and the same kernel for the 4KB and 128MB extents in every run (kernels tied
within the noise give the rule's one, named with its ties); the same batch and kernel
per budget in at least N-1 of N runs. Each row also shows the cache advise measured
(and sysfs's LLC) and the largest step it found.

    python benchmarks/advise_stability.py [--runs N] [--quick]
"""

import collections
import json
import subprocess
import sys
import time

from _common import import_pagezero, parse_args

EXTENTS = {"4KB": 4 << 10, "128MB": 128 << 20}


def kernel_at(doc, extent):
    for row in doc["best_kernel"]:
        if row["min_bytes"] <= extent <= row["max_bytes"]:
            return row["kernel"], len(row.get("tied", ()))
    return None, 0


def knee_text(doc, size):
    """The knee in words: its size, or "none" with the largest step (null knee_bytes)."""
    if doc["knee_bytes"] is None:
        return f"none ({doc.get('knee_step', 0):.2f}x)"
    return size(doc["knee_bytes"])


def cache_bytes(doc):
    """The cache advise used: the measured one where it differs from sysfs, else sysfs's."""
    return (doc.get("cache") or {}).get("effective_bytes") or doc["llc_bytes"] or None


def answers(doc, size):
    knee = "none" if doc["knee_bytes"] is None else size(doc["knee_bytes"])
    out = {"knee": (knee, len(doc.get("knee_tied", ())))}
    for row in doc["batch"]:
        out[f"{row['budget_ms']:g} ms"] = (
            f"{size(row['batch_bytes'])} {row['kernel']}",
            len(row.get("tied", ())),
        )
    for name, extent in EXTENTS.items():
        kernel, ties = kernel_at(doc, extent)
        if kernel is not None:
            out[f"kernel {name}"] = (kernel, ties)
    return out


def main():
    args = parse_args(
        __doc__,
        extra=lambda p: p.add_argument(
            "--runs", type=int, default=5, help="advise runs in a row (default 5)"
        ),
    )
    pagezero = import_pagezero()
    size = pagezero.format_size
    cmd = [sys.executable, "-m", "pagezero", "advise", "--format", "json"]
    if args.quick:
        cmd.append("--quick")
    rows = []
    for i in range(args.runs):
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"advise run {i + 1} failed ({proc.returncode}): {proc.stderr.strip()}")
            return 1
        doc = json.loads(proc.stdout)
        rows.append((answers(doc, size), time.monotonic() - start, doc))
        cache = doc.get("cache") or {}
        print(
            f"run {i + 1}: knee {knee_text(doc, size)}, cache "
            f"{size(cache['cache_bytes']) if cache.get('cache_bytes') else 'not measured'} "
            f"({cache.get('source', 'sysfs')}), sysfs LLC {size(doc['llc_bytes'] or 0)}",
            file=sys.stderr,
            flush=True,
        )
        print(f"run {i + 1}/{args.runs}: {rows[-1][1]:.0f} s", file=sys.stderr, flush=True)

    keys = list(rows[0][0])
    doc0 = rows[0][2]
    print(
        f"# {args.runs} runs of {' '.join(cmd[1:])}; {doc0.get('runs', 1)} run(s) each, "
        f"region on {doc0.get('backing', '4KB')} pages; (n): tied alternatives"
    )
    width = {
        k: max(len(k), *(len(f"{r[0][k][0]} ({r[0][k][1]})") for r in rows if k in r[0]))
        for k in keys
    }
    print(f"{'run':>3} {'s':>4}  " + "  ".join(f"{k:<{width[k]}}" for k in keys))
    for i, (ans, seconds, _) in enumerate(rows):
        cells = [f"{ans[k][0]} ({ans[k][1]})" if k in ans else "-" for k in keys]
        print(
            f"{i + 1:>3} {seconds:4.0f}  "
            + "  ".join(f"{c:<{width[k]}}" for c, k in zip(cells, keys))
        )
    print()
    verdicts = []
    for k in keys:
        values = collections.Counter(r[0][k][0] for r in rows if k in r[0])
        value, count = values.most_common(1)[0]
        need = args.runs if k == "knee" or k.startswith("kernel") else args.runs - 1
        verdicts.append(count >= need)
        print(f"{k:<14} {count}/{args.runs} agree on {value}  (need {need})")
    # A knee that is there sits within half to twice the cache, in every run.
    placed = [
        cache_bytes(d) and cache_bytes(d) // 2 <= d["knee_bytes"] <= 2 * cache_bytes(d)
        for _, _, d in rows
        if d["knee_bytes"] is not None
    ]
    if placed:
        print(f"{'knee at cache':<14} {sum(map(bool, placed))}/{len(placed)} within half to twice")
        verdicts.append(all(placed))
    ok = all(verdicts)
    print(
        ("PASS" if ok else "FAIL") + f": knee and kernels by extent in every run, the "
        f"budgets in at least {args.runs - 1} of {args.runs}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
