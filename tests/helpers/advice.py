"""An Advice made by hand, whose every figure and choice is worked out in its comments:
the shared data of the advice's text tests (test_advice_rules.py, test_advise_report.py)."""

from pagezero.studies.advise.text import Advice

KB, MB = 1 << 10, 1 << 20
GB = 1e9


def cell(gbps, p90=0.1, noise=2.0):
    """A made-up cell: its worst batch of 9 visits in 10 `p90` ms, typical half, max twice."""
    return {
        "bytes_per_sec": gbps * GB,
        "spread_pct": 1.5,
        "noise_pct": noise,
        "typical_worst_ms": p90 / 2,
        "p90_worst_ms": p90,
        "max_worst_ms": p90 * 2,
    }


# The case: a slower 16MB movnti chosen over a tied, faster 1MB avx. With the
# sweep's 2% noise the tolerance is the 5% floor: 25.8 GB/s ties down to 24.51.
CELLS = {
    ("stosb", 64 * KB): cell(10, 0.01),
    ("stosb", 1 * MB): cell(11, 0.1),
    ("stosb", 4 * MB): cell(11, 0.38),
    ("stosb", 16 * MB): cell(12, 1.4),
    ("movnti", 64 * KB): cell(9, 0.01),
    ("movnti", 1 * MB): cell(24, 0.044),
    ("movnti", 4 * MB): cell(24.6, 0.17),
    ("movnti", 16 * MB): cell(24.6, 0.68),
    ("avx", 64 * KB): cell(11, 0.01),
    ("avx", 1 * MB): cell(25.8, 0.04),
    ("avx", 4 * MB): cell(25.5, 0.16),
    ("avx", 16 * MB): cell(25.6, 0.66),
}
TABLE = ["stosb", "movnti", "avx"]  # the kernel table's order

# By extent: 64KB and 1MB avx alone (stosb's 10 is 9% behind 11, movnti's 24 7% behind
# 25.8); at 4MB and 16MB movnti ties avx and is first in the table. A range's rate is its
# kernel's median: avx (11 + 25.8) / 2 = 18.4, movnti 24.6.
BEST = (
    {"min_bytes": 64 * KB, "max_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 18.4 * GB,
     "tied": [], "pooled": False},
    {"min_bytes": 4 * MB, "max_bytes": 16 * MB, "kernel": "movnti", "bytes_per_sec": 24.6 * GB,
     "tied": ["avx"], "pooled": False},
)  # fmt: skip


def row(budget, extent, kernel, fits=True, tied=()):
    """A "batch" row of CELLS' cell (kernel, extent), as choices.batch_for_budget makes it."""
    c = CELLS[(kernel, extent)]
    return {
        "budget_ms": budget, "batch_bytes": extent, "kernel": kernel,
        "bytes_per_sec": c["bytes_per_sec"], "worst_ms": c["typical_worst_ms"],
        "typical_worst_ms": c["typical_worst_ms"], "p90_worst_ms": c["p90_worst_ms"],
        "max_worst_ms": c["max_worst_ms"], "checked_against": "p90_worst_ms", "fits": fits,
        "spread_pct": 1.5,
        "tied": [{"batch_bytes": e, "kernel": k, "bytes_per_sec": CELLS[(k, e)]["bytes_per_sec"]}
                 for e, k in tied],
    }  # fmt: skip


# 1 ms: everything but stosb's 16MB (1.4 ms) fits; the fastest is 1MB avx (25.8), tied
# with 4MB movnti and avx and 16MB movnti and avx; the largest tied batch is 16MB, where
# movnti (24.6) and avx (25.6) tie and movnti comes first in the table. 0.1 ms: 64KB, and
# movnti's and avx's 1MB (0.044 and 0.04 ms, 5% added); avx at 25.8 ties nothing.
# 0.005 ms: nothing; the closest, of the 0.01 ms 64KB cells the fastest, avx at 11.
BATCH = (
    row(1.0, 16 * MB, "movnti",
        tied=[(1 * MB, "avx"), (4 * MB, "movnti"), (4 * MB, "avx"), (16 * MB, "avx")]),
    row(0.1, 1 * MB, "avx"),
    row(0.005, 64 * KB, "avx", fits=False),
)  # fmt: skip

# stosb alone: within 1 ms 1MB and 4MB (11 each) tie, the larger taken; within 0.1 ms
# only 64KB; within 0.005 ms nothing, the closest its 64KB.
OWN = [
    row(1.0, 4 * MB, "stosb", tied=[(1 * MB, "stosb")]),
    row(0.1, 64 * KB, "stosb"),
    row(0.005, 64 * KB, "stosb", fits=False),
]


def advice(**changes):
    fields = dict(
        knee_bytes=None,
        llc_bytes=16 * MB,
        best_kernel=BEST,
        batch=BATCH,
        knee_kernel="stosb",
        knee_step=1.0476,
        batch_fits=(True, True, False),
        extents=(64 * KB, 1 * MB, 4 * MB, 16 * MB),
        region_bytes=64 * MB,
        runs=3,
        passes=4,
        seconds=12.34,
        cells=CELLS,
        knee_tied=(),
        backing="2MB",
        rounds=2,
    )
    return Advice(**(fields | changes))
