"""The advice as words and JSON (pagezero/advice_text.py), from an Advice made by hand.

The expected text is written out in full, figures worked out by hand from the cells
(medians, GB/s, the knee's share of the LLC), so a changed word, number format or
branch shows as a difference, not only a missing keyword.
"""

from pagezero.advice_text import Advice

KB, MB = 1 << 10, 1 << 20


def cell(gbps, noise=2.0, typical=0.1, worst=0.2):
    return {
        "bytes_per_sec": gbps * 1e9,
        "spread_pct": 1.5,
        "noise_pct": noise,
        "typical_worst_ms": typical,
        "max_worst_ms": worst,
    }


CELLS = {
    ("stosb", 64 * KB): cell(10),
    ("stosb", 1 * MB): cell(12),
    ("stosb", 4 * MB): cell(30),
    ("stosb", 16 * MB): cell(34),
    ("avx", 64 * KB): cell(11),
    ("avx", 1 * MB): cell(12.5),
    ("avx", 4 * MB): cell(29),
    ("avx", 16 * MB): cell(33),
}

BEST = (
    {"min_bytes": 64 * KB, "max_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 11.75e9,
     "tied": ["stosb"]},
    {"min_bytes": 4 * MB, "max_bytes": 4 * MB, "kernel": "stosb", "bytes_per_sec": 30e9,
     "tied": []},
    {"min_bytes": 16 * MB, "max_bytes": 16 * MB, "kernel": "stosb", "bytes_per_sec": 34e9},
)  # fmt: skip

BATCH = (
    {"budget_ms": 1.0, "batch_bytes": 4 * MB, "kernel": "stosb", "bytes_per_sec": 30e9,
     "typical_worst_ms": 0.125, "max_worst_ms": 0.5,
     "tied": [{"batch_bytes": 4 * MB, "kernel": "avx", "bytes_per_sec": 29e9},
              {"batch_bytes": 1 * MB, "kernel": "avx", "bytes_per_sec": 12.5e9},
              {"batch_bytes": 1 * MB, "kernel": "stosb", "bytes_per_sec": 12e9}]},
    {"budget_ms": 0.05, "batch_bytes": 64 * KB, "kernel": "avx", "bytes_per_sec": 11e9,
     "typical_worst_ms": 0.0625, "max_worst_ms": 1.25, "tied": []},
)  # fmt: skip


def advice(**changes):
    fields = dict(
        knee_bytes=4 * MB,
        llc_bytes=16 * MB,
        best_kernel=BEST,
        batch=BATCH,
        knee_kernel="stosb",
        knee_step=2.75,
        batch_fits=(True, False),
        extents=(64 * KB, 1 * MB, 4 * MB, 16 * MB),
        region_bytes=64 * MB,
        runs=3,
        passes=4,
        seconds=12.34,
        cells=CELLS,
        knee_tied=(1 * MB,),
        backing="2MB",
        rounds=2,
    )
    return Advice(**(fields | changes))


EXPECTED = [
    "From a sweep of 2 kernels x 4 extents (64KB to 16MB), clearing a 64MB region on 2MB "
    "pages in batches of each extent, 3 runs (fresh processes) of 4 passes each in 2 "
    "shuffled rounds, 12.3 s (GB/s = 10^9 bytes/s; medians over runs):",
    "Candidates within the noise between runs are tied (the larger of twice the sweep's "
    "noise, 2.0%, and 5%); a batch fits a budget with that noise added; among tied "
    "kernels, clear_pages()'s (stosb) if tied, else the first in the kernel table.",
    "",
    "Fastest kernel by extent:",
    "  64KB to 1MB      avx                  11.8 GB/s  (tied: stosb)",
    "  4MB              stosb                30.0 GB/s",
    "  16MB             stosb                34.0 GB/s",
    "",
    # stosb below 4MB: 10 and 12 GB/s, median 11; from 4MB: 30 and 34, median 32.
    "Knee: stosb (clear_pages() here) clears 2.8x faster from 4MB on (11.0 GB/s below, "
    "32.0 GB/s from there): from that extent the CPU stops allocating cache lines for its "
    "stores; the LLC is 16MB (sysfs), so the knee sits at 0.25x the LLC; tied within "
    "noise: 1MB (the smallest is taken).",
    "",
    "Batch for clear_pages() between resched points, by typical worst batch latency (the "
    "slowest batch position, each position's time the median over a run's passes, then "
    "the median over runs, so a pass another task interrupted does not decide; max: the "
    "slowest batch of all runs); among tied, the largest batch:",
    "  1 ms: 4MB with stosb, 30.0 GB/s, typical worst 0.12 ms (max 0.50 ms)",
    "      tied: 4MB avx; 1MB every kernel",
    "  0.05 ms: nothing measured fits; closest: 64KB with avx, 11.0 GB/s, typical worst "
    "0.06 ms (max 1.25 ms)",
]


def test_the_words_of_a_full_sweep():
    assert advice().describe() == EXPECTED


def test_one_run_says_quick_and_that_the_noise_is_unknown():
    quick_cells = {c: dict(v, noise_pct=None) for c, v in CELLS.items()}
    lines = advice(runs=1, rounds=1, cells=quick_cells).describe()
    assert lines[0] == EXPECTED[0].replace(
        "3 runs (fresh processes) of 4 passes each in 2 shuffled rounds",
        "1 run of 4 passes (--quick: the noise between runs is unknown, ties judged by "
        "the passes' spread)",
    )
    assert lines[1] == EXPECTED[1].replace("2.0%", "unknown with one run")
    assert lines[2:] == EXPECTED[2:]


def test_one_round_is_not_named():
    assert advice(rounds=1).describe()[0] == EXPECTED[0].replace(" in 2 shuffled rounds", "")


def test_an_interrupted_sweep_says_so_second():
    lines = advice(interrupted="SIGINT").describe()
    assert lines[1] == (
        "Interrupted by SIGINT: from the 8 cells measured before it, partly with fewer runs."
    )
    assert lines[:1] + lines[2:] == EXPECTED


def test_a_knee_without_ties_or_llc():
    line = advice(knee_tied=(), llc_bytes=0).describe()[8]
    assert line == (
        "Knee: stosb (clear_pages() here) clears 2.8x faster from 4MB on (11.0 GB/s below, "
        "32.0 GB/s from there): from that extent the CPU stops allocating cache lines for "
        "its stores; the LLC size is unknown (sysfs gives none)."
    )


def test_a_step_below_the_clear_one_is_no_knee():
    # KNEE_CLEAR_STEP is 1.3: 1.25 is not a knee, 1.3 is.
    line = advice(knee_step=1.25).describe()[8]
    assert line == (
        "Knee: none clear for stosb (clear_pages() here): its largest step is only 1.25x, "
        "at 4MB; the LLC is 16MB (sysfs), so the knee sits at 0.25x the LLC."
    )
    assert (
        advice(knee_step=1.3)
        .describe()[8]
        .startswith("Knee: stosb (clear_pages() here) clears 1.3x")
    )


def test_the_json_shape():
    doc = advice().to_json()
    assert doc == {
        "knee_bytes": 4 * MB,
        "llc_bytes": 16 * MB,
        "best_kernel": [dict(r) for r in BEST],
        "batch": [dict(r) for r in BATCH],
        "knee_tied": [1 * MB],
        "runs": 3,
        "backing": "2MB",
    }
    assert advice(interrupted="SIGTERM").to_json()["interrupted"] == "SIGTERM"
