"""The report's words (pagezero.studies.report.words) from tables made by hand: every
cell, sentence and footnote in full, so that a changed rounding, a boundary
moved by one byte or a quoted rate taken from the wrong side fails here, with
no benchmark run. The oracle is the arithmetic written beside each case."""

import pytest

from pagezero.results.resultset import Result, ResultSet
from pagezero.studies.report.words import (
    HOT_QUESTION,
    SPREAD_LIMIT_PCT,
    STREAM_QUESTION,
    cell_text,
    fastest_lines,
    knee_line,
    knee_of,
    knee_row,
    markdown_table,
    marked,
    rate,
    ratio,
    runs_line,
    span,
    spread_footnote,
)

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
LLC = 32 * MB


def _cell(median, spread_pct=1.0, spread_of="runs", size=None):
    return {"median": median, "spread_pct": spread_pct, "spread_of": spread_of, "size": size}


# Figures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bytes_per_sec, text",
    [
        (None, "-"),
        (12.34e9, "12.3"),  # GB/s of 10^9 bytes, one decimal
        (1e9, "1.0"),  # one decimal from 1 GB/s up
        (0.994e9, "0.99"),  # two below it
        (0.05e9, "0.05"),
    ],
)
def test_a_rate_in_gb_per_second(bytes_per_sec, text):
    assert rate(bytes_per_sec) == text


def test_a_ratio_and_a_span():
    assert ratio(1.254) == "1.25x"
    assert ratio(10 / 3) == "3.33x"
    assert span(4 * KB, 4 * KB) == "4KB"
    assert span(4 * KB, 2 * MB) == "4KB to 2MB"


# The spread mark ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell, llc, mark",
    [
        (_cell(1e9, 10.0, size=LLC + 1), LLC, True),  # one byte beyond the LLC
        (_cell(1e9, 10.0, size=LLC), LLC, False),  # the LLC itself is inside
        (_cell(1e9, SPREAD_LIMIT_PCT, size=GB), LLC, False),  # the limit itself is not over
        (_cell(1e9, SPREAD_LIMIT_PCT + 0.01, size=GB), LLC, True),
        (_cell(1e9, 10.0, "loops", size=GB), LLC, False),  # one run: between runs unknown
        (_cell(1e9, 10.0, size=4 * KB), 0, True),  # LLC unknown: every cell is beyond
        (_cell(1e9, 10.0, size=None), LLC, False),  # no size: counted as 0 bytes
    ],
)
def test_which_cells_are_marked(cell, llc, mark):
    assert marked(cell, llc) is mark
    assert cell_text(cell, llc).endswith("*") is mark


def test_the_footnote_names_the_limit_and_the_cure():
    assert spread_footnote() == (
        "* beyond the cache, the runs' medians of this cell spread by more than 5% "
        "(coefficient of variation): each process got its own physical placement of "
        "the buffer; more runs (--runs) narrow it down."
    )


def test_a_table_in_full_with_its_footnote():
    table = {
        "b": {4 * KB: _cell(1.0e9, 9.2, size=4 * KB)},
        "a": {4 * KB: _cell(45.24e9, 3.4, size=4 * KB), 64 * MB: _cell(20e9, 7.0, size=64 * MB)},
    }
    assert markdown_table(table, [4 * KB, 64 * MB], "extent", LLC) == [
        "| extent | a | b |",  # kernels in name order
        "|---|---|---|",
        "| 4KB | 45.2 +-3% | 1.0 +-9% |",  # a wide spread inside the LLC: not marked
        "| 64MB | 20.0 +-7%* | - |",  # b not measured there
        "",
        spread_footnote(),
    ]


def test_a_table_without_a_mark_has_no_footnote():
    table = {"a": {64 * MB: _cell(20e9, 4.0, size=64 * MB), 1 * MB: _cell(9e9, 9.0, size=MB)}}
    assert markdown_table(table, [1 * MB, 64 * MB], "region", LLC) == [
        "| region | a |",
        "|---|---|",
        "| 1MB | 9.0 +-9% |",  # inside the LLC, whatever its spread
        "| 64MB | 20.0 +-4% |",
    ]


# How many runs the cells stand on -------------------------------------------------------


def _point_runs(size, processes, first_process=0):
    """One result per process, each of three loops at 10 GB/s."""
    return [
        Result(
            benchmark="memset",
            function="k",
            params={"size": size, "chunk": 0, "loops": 3},
            bytes_per_loop=size,
            clock="ns",
            samples=(size // 10,) * 3,
        )
        for _ in range(processes)
    ]


def _runs_of(*counts):
    results, rows, process = [], [], 0
    for i, n in enumerate(counts):
        for r in _point_runs((i + 1) * MB, n):
            results.append(r)
            rows.append({"repetition": process, "process": process})
            process += 1
    return ResultSet(results, rows)


@pytest.mark.parametrize("counts, n", [((5, 3), 3), ((2,), 2), ((2, 4), 2)])
def test_the_runs_line_counts_the_fewest_runs_of_a_point(counts, n):
    assert runs_line(_runs_of(*counts)) == (
        f"Cells: the median of {n} runs' medians, each run a fresh process, +- the "
        "spread between runs (as the figures draw them)."
    )


def test_one_run_says_the_spread_between_runs_is_unknown():
    assert runs_line(_runs_of(1)) == (
        "Cells: medians of one run (one process) +- the spread of its loops: the "
        "spread between runs is unknown; `pagezero report --runs 3` measures it."
    )
    assert runs_line(ResultSet([])) == ""


# "Fastest" sentences --------------------------------------------------------------------


def _table(rates):
    return {k: {x: _cell(r, size=x) for x, r in by_x.items()} for k, by_x in rates.items()}


def test_fastest_sentences_split_at_the_llc_and_quote_both_ends():
    xs = [4 * KB, 1 * MB, LLC, 64 * MB, 128 * MB]
    table = _table(
        {
            "a": {4 * KB: 50e9, 1 * MB: 40e9, LLC: 30e9, 64 * MB: 10e9, 128 * MB: 10e9},
            "b": {4 * KB: 20e9, 1 * MB: 20e9, LLC: 20e9, 64 * MB: 20e9, 128 * MB: 21e9},
        }
    )
    assert fastest_lines(table, xs, LLC) == [
        # The LLC's own extent is the hot question's: the buffer still fits.
        "Reusing a buffer while it is hot (in cache), the kernel that clears fastest by extent "
        "(of kernels tied within the noise, clear_pages()'s, else the first in the kernel "
        "table): 4KB to 32MB: a (50.0 GB/s at 4KB, 30.0 GB/s at 32MB).",
        "Streaming through a region larger than the LLC, as the kernel clears fresh pages, "
        "the kernel that clears fastest by extent (of kernels tied within the noise, "
        "clear_pages()'s, else the first in the kernel table): 64MB to 128MB: b (20.0 GB/s at "
        "64MB, 21.0 GB/s at 128MB).",
    ]
    # Each sentence opens with its question, capitalised.
    for line, question in zip(fastest_lines(table, xs, LLC), (HOT_QUESTION, STREAM_QUESTION)):
        assert line.startswith(question[0].upper() + question[1:] + ", the kernel that ")


def test_without_an_llc_every_extent_is_the_hot_question_and_one_end_is_quoted_once():
    table = _table({"a": {4 * KB: 0.5e9}, "b": {4 * KB: 0.2e9}})
    assert fastest_lines(table, [4 * KB], 0) == [
        "Reusing a buffer while it is hot (in cache), the kernel that clears fastest by extent "
        "(of kernels tied within the noise, clear_pages()'s, else the first in the kernel "
        "table): 4KB: a (0.50 GB/s at 4KB)."
    ]


def test_extents_all_beyond_the_llc_are_the_streaming_question_alone():
    xs = [64 * MB, 128 * MB]
    table = _table({"a": {64 * MB: 10e9, 128 * MB: 10.2e9}})
    assert fastest_lines(table, xs, LLC) == [
        "Streaming through a region larger than the LLC, as the kernel clears fresh pages, "
        "the kernel that clears fastest by extent (of kernels tied within the noise, "
        "clear_pages()'s, else the first in the kernel table): 64MB to 128MB: a (10.0 GB/s at "
        "64MB, 10.2 GB/s at 128MB)."
    ]


def test_a_kernel_that_takes_over_gets_its_own_range_in_the_one_sentence():
    xs = [4 * KB, 64 * KB, 1 * MB]
    table = _table({"a": {4 * KB: 50e9, 64 * KB: 10e9, 1 * MB: 10e9}, "b": {x: 20e9 for x in xs}})
    (line,) = fastest_lines(table, xs, LLC)  # the question once, for both ranges
    assert line.endswith(
        "table): 4KB: a (50.0 GB/s at 4KB); 64KB to 1MB: b (20.0 GB/s at 64KB, 20.0 GB/s at 1MB)."
    )


def test_kernels_tied_at_the_smallest_extent_give_one_answer_however_their_order_falls():
    # A Zen 5 VM's report: x86-64-avx512 in 2 of 5 runs, x86-64-unrolled in 3, the two 2% apart
    # at 4KB in either order. Both orders: the rule's kernel (the first in the table), the tie
    # named; clear_pages()'s stosb, 20% behind, is not tied.
    order = ["x86-64-unrolled", "x86-64-stosq", "x86-64-stosb", "x86-64-avx512"]
    xs = [4 * KB, 64 * KB]
    for unrolled, avx512 in ((50e9, 51e9), (51e9, 50e9)):
        table = _table(
            {
                "x86-64-unrolled": {4 * KB: unrolled, 64 * KB: 40e9},
                "x86-64-avx512": {4 * KB: avx512, 64 * KB: 60e9},
                "x86-64-stosb": {4 * KB: 40e9, 64 * KB: 30e9},
            }
        )
        (line,) = fastest_lines(table, xs, LLC, order=order, clear_pages="x86-64-stosb")
        assert line.endswith(
            f"table): 4KB: x86-64-unrolled, tied with x86-64-avx512 ({rate(unrolled)} GB/s at "
            "4KB); 64KB: x86-64-avx512 (60.0 GB/s at 64KB)."
        )


# The chunk study's step ---------------------------------------------------------------


def test_the_knee_and_the_medians_of_its_two_sides():
    # 4KB is below KNEE_MIN_EXTENT (64KB): it is neither side's.
    by_chunk = {4 * KB: 1e9, 64 * KB: 4e9, 1 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    assert knee_of(by_chunk) == {
        "knee": 16 * MB,
        "below": [64 * KB, 1 * MB],
        "above": [16 * MB, 64 * MB],
        "below_rate": 4.5e9,  # median of 4 and 5
        "above_rate": 15e9,  # median of 10 and 20
        "step": pytest.approx(15 / 4.5),
    }


def test_no_knee_with_one_chunk_to_look_at():
    assert knee_of({4 * KB: 1e9, 16 * KB: 5e9, 64 * KB: 2e9}) is None


def test_the_knee_row_quotes_what_the_sentence_quotes():
    k = knee_of({64 * KB: 4e9, 1 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9})
    assert knee_row("k", k) == ["k", "64KB to 1MB", "4.5", "16MB to 64MB", "15.0", "3.33x"]


def test_three_chunks_a_side_are_quoted_from_first_to_last():
    by_chunk = {64 * KB: 4e9, 1 * MB: 4e9, 8 * MB: 5e9, 16 * MB: 10e9, 32 * MB: 12e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    assert knee_row("k", k) == ["k", "64KB to 8MB", "4.0", "16MB to 64MB", "12.0", "3.00x"]
    assert "chunks of 16MB to 64MB clear 3.00x as fast as chunks of 64KB to 8MB" in knee_line(
        "k", k, by_chunk, 0, GB, "2MB THP"
    )


def test_a_step_of_exactly_the_clear_step_is_a_knee():
    by_chunk = {64 * KB: 10e9, 1 * MB: 13e9}
    k = knee_of(by_chunk)
    assert k["step"] == 1.3  # KNEE_CLEAR_STEP itself
    assert knee_line("k", k, by_chunk, 0, GB, "4KB").startswith("k: the rate steps up at 1MB")


def test_a_step_below_the_clear_step_is_not_called_a_knee():
    by_chunk = {64 * KB: 10e9, 1 * MB: 10.5e9, 16 * MB: 11e9, 64 * MB: 11.5e9}
    k = knee_of(by_chunk)
    assert k["step"] == pytest.approx(1.1)  # under KNEE_CLEAR_STEP (1.3)
    assert knee_line("k", k, by_chunk, LLC, GB, "2MB THP") == (
        "k: no clear step in rate with chunk size up to 64MB (whole 1GB region on 2MB THP "
        "pages: 11.5 GB/s)."  # the largest chunk's rate, not a side's median
    )


def test_a_step_near_the_llc_with_evidence_is_where_stores_stop_allocating_cache_lines():
    by_chunk = {64 * KB: 4e9, 1 * MB: 4e9, 8 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    # knee 16MB = LLC / 2, and the last chunk below it (8MB) is LLC / 4: both edges.
    assert knee_line("k", k, by_chunk, LLC, GB, "2MB THP", evidence=True) == (
        "k stops allocating cache lines above ~8MB per call here, a step the non-temporal "
        "stores do not show (LLC: 32MB): chunks of 16MB to 64MB clear 3.75x as fast as "
        "chunks of 64KB to 8MB (medians 15.0 vs 4.0 GB/s), clearing a 1GB region on 2MB "
        "THP pages."
    )


def test_a_step_near_the_llc_without_evidence_is_only_a_step():
    # A rate alone (a non-temporal store's, or one with no non-temporal store beside it)
    # says where it steps, not why.
    by_chunk = {64 * KB: 4e9, 1 * MB: 4e9, 8 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    line = knee_line("k", k, by_chunk, LLC, GB, "2MB THP", cache_words="cache: 32MB (sysfs)")
    assert line == (
        "k: the rate steps up at 16MB per call, near the cache (cache: 32MB (sysfs)): chunks "
        "of 16MB to 64MB clear 3.75x as fast as chunks of 64KB to 8MB (medians 15.0 vs 4.0 "
        "GB/s), clearing a 1GB region on 2MB THP pages."
    )
    assert "allocating" not in line


def test_a_knee_at_twice_the_llc_is_still_near_it():
    by_chunk = {64 * KB: 4e9, 16 * MB: 4e9, 64 * MB: 10e9, 256 * MB: 10e9}
    k = knee_of(by_chunk)
    assert k["knee"] == 2 * LLC
    assert knee_line("k", k, by_chunk, LLC, GB, "4KB", evidence=True).startswith(
        "k stops allocating cache lines above ~16MB per call here, a step the non-temporal "
        "stores do not show (LLC: 32MB): "
    )


@pytest.mark.parametrize(
    "llc, why",
    [
        (LLC, "the last chunk below the knee (1MB) is under LLC / 4"),
        (0, "no LLC to compare with"),
        (4 * MB, "the knee (16MB) is beyond twice the LLC"),
        (64 * MB, "the knee (16MB) is under half the LLC"),
    ],
)
def test_a_step_away_from_the_llc_is_said_where_it_is(llc, why):
    by_chunk = {64 * KB: 4e9, 1 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    assert knee_line("k", k, by_chunk, llc, GB, "2MB THP", evidence=True) == (
        "k: the rate steps up at 16MB per call: chunks of 16MB to 64MB clear 3.33x as fast "
        "as chunks of 64KB to 1MB (medians 15.0 vs 4.5 GB/s), clearing a 1GB region on "
        "2MB THP pages."
    ), why


NEAR = "k stops allocating cache lines"
AWAY = "k: the rate steps up at 16MB per call"


@pytest.mark.parametrize(
    "last_below, llc, opening",
    [
        (12 * MB, 40 * MB, AWAY),  # knee 16MB under half the LLC (20MB), over a third
        (8 * MB, 6 * MB, AWAY),  # knee 16MB over twice the LLC (12MB), under three times
        (7 * MB, LLC, AWAY),  # the last chunk below (7MB) under LLC / 4 (8MB), over LLC / 5
        (8 * MB, 8 * MB, NEAR),  # knee 16MB at twice the LLC, last chunk below at the LLC
    ],
)
def test_near_the_llc_means_from_half_to_twice_it(last_below, llc, opening):
    by_chunk = {64 * KB: 4e9, 1 * MB: 4e9, last_below: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    assert (k["knee"], k["below"][-1]) == (16 * MB, last_below)
    assert knee_line("k", k, by_chunk, llc, GB, "2MB THP", evidence=True).startswith(opening)


def test_the_questions_name_the_measured_cache_where_it_differs():
    # An Intel Xeon VM: the run's cache 64MB, sysfs's LLC 480MB. 128MB is beyond the cache
    # the run has, though within sysfs's LLC.
    table = {"t": {64 * MB: _cell(29e9), 128 * MB: _cell(10.7e9)}}
    words = "64MB (measured; sysfs's LLC: 480MB)"
    assert fastest_lines(table, [64 * MB, 128 * MB], 64 * MB, words) == [
        "Reusing a buffer while it is hot, in a cache of 64MB (measured; sysfs's LLC: 480MB), "
        "the kernel that clears fastest by extent (of kernels tied within the noise, "
        "clear_pages()'s, else the first in the kernel table): 64MB: t (29.0 GB/s at 64MB).",
        "Streaming through a region larger than the cache, 64MB (measured; sysfs's LLC: "
        "480MB), as the kernel clears fresh pages, the kernel that clears fastest by extent (of "
        "kernels tied within the noise, clear_pages()'s, else the first in the kernel table): "
        "128MB: t (10.7 GB/s at 128MB).",
    ]
