"""The extents study's answers and cache sentence (pagezero.studies.report.extents), and the
chunk study's evidence for cache-line allocation, from tables made by hand: every sentence
in full, its figures worked beside it. No benchmark runs; no CPU is assumed."""

from pagezero.analysis.cache import MeasuredCache
from pagezero.results.resultset import Result, ResultSet
from pagezero.studies.report.chunks import allocation_evidence
from pagezero.studies.report.extents import (
    answer,
    cache_line,
    headline_rows,
    headline_table,
    headline_text,
    pages_by_extent,
    pages_words,
)
from pagezero.studies.report.words import knee_of

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
NT = {"avx512-nt", "avx-nt"}


def _table(rates):
    return {k: {x: {"median": r} for x, r in by.items()} for k, by in rates.items()}


# Intel Xeon VM: the run's cache 64MB (sysfs 480MB); at 1GB rep stosb 10.7, NT 26.0 and 25.5.
INTEL = _table(
    {
        "stosb": {64 * MB: 29e9, 1 * GB: 10.7e9},
        "avx512": {64 * MB: 28e9, 1 * GB: 10.8e9},
        "avx512-nt": {64 * MB: 26e9, 1 * GB: 26e9},
        "avx-nt": {64 * MB: 25e9, 1 * GB: 25.5e9},
    }
)
INTEL_CACHE = MeasuredCache(64 * MB, 128 * MB, 480 * MB, "/sys/.../index3/size")


def headline_answers(table, xs, cache, clear_pages, nontemporal):
    return [answer(r, nontemporal) for r in headline_rows(table, xs, cache, clear_pages)]


def test_beyond_the_cache_non_temporal_stores_against_clear_pages_as_a_ratio():
    answers = headline_answers(INTEL, [64 * MB, 1 * GB], INTEL_CACHE, "stosb", NT)
    # In cache: stosb 29.0 is the fastest, avx512 28.0 within 5% (a tie): 28 / 29 = 0.97.
    # Beyond: 26.0 / 10.7 = 2.43; avx-nt 25.5 is within 5% of 26.0: tied.
    assert answers == [
        "29.0 GB/s in cache, 64MB extents: clear_pages()'s stosb clears fastest, tied with "
        "avx512; the fastest other store, temporal avx512, 28.0 GB/s (0.97x) (extents table).",
        "2.43x beyond the cache, 1GB extents: non-temporal avx512-nt (tied with avx-nt) "
        "clears at 26.0 GB/s, clear_pages()'s stosb at 10.7 GB/s (extents table).",
    ]
    # Every figure of the sentences is a cell of the headline table, and of summary.txt's.
    rows = headline_rows(INTEL, [64 * MB, 1 * GB], INTEL_CACHE, "stosb")
    assert headline_table(rows)[2:] == [
        "| in cache (64MB, measured) | 64MB | stosb | 29.0 | avx512 | 28.0 | 0.97x |",
        "| beyond the cache (64MB, measured) | 1GB | stosb | 10.7 | avx512-nt | 26.0 | 2.43x |",
    ]
    assert headline_text(rows) == [
        "          extent  clear_pages()  GB/s  fastest other  GB/s  ratio",
        "in cache    64MB  stosb          29.0  avx512         28.0  0.97x",
        "beyond       1GB  stosb          10.7  avx512-nt      26.0  2.43x",
    ]


def test_each_answer_is_its_figure_first_and_its_table_last_in_under_200_characters():
    for a in headline_answers(INTEL, [64 * MB, 1 * GB], INTEL_CACHE, "stosb", NT):
        assert a[0].isdigit() and a.endswith(" (extents table).") and len(a) < 200, a


def test_clear_pages_tied_with_the_fastest_is_said_as_a_tie():
    # AMD Zen 4: beyond the LLC rep stosb 66 against avx512-nt 68 (within 5%).
    amd = _table({"stosb": {256 * MB: 66e9}, "avx512-nt": {256 * MB: 68e9}})
    cache = MeasuredCache(32 * MB, 64 * MB, 32 * MB, "sysfs")
    (answer,) = headline_answers(amd, [256 * MB], cache, "stosb", NT)
    assert answer == (
        "66.0 GB/s beyond the cache, 256MB extents: clear_pages()'s stosb ties with the "
        "fastest, non-temporal avx512-nt (68.0 GB/s, 1.03x) (extents table)."
    )
    # Three or more kernels tied are counted, not named.
    rates = {k: {256 * MB: 68e9 - i} for i, k in enumerate(("a", "b", "c", "d"))}
    many = _table(dict(rates, stosb={256 * MB: 10e9}))
    (answer,) = headline_answers(many, [256 * MB], cache, "stosb", NT)
    assert answer.startswith("6.80x beyond the cache, 256MB extents: temporal a (tied with 3 ")


def test_no_answer_where_the_table_does_not_reach_or_the_cache_is_unknown():
    cache = MeasuredCache(64 * MB, 128 * MB, 480 * MB)
    (only,) = headline_answers(INTEL, [64 * MB], cache, "stosb", NT)
    assert only.startswith("29.0 GB/s in cache")
    assert headline_answers(INTEL, [64 * MB, 1 * GB], MeasuredCache(None, None), "stosb", NT) == []
    assert headline_answers(INTEL, [1 * GB], INTEL_CACHE, "missing", NT) == []


def test_the_cache_sentence_says_which_cache_and_where_it_was_read():
    assert cache_line(INTEL_CACHE, 4 * GB) == (
        "The cache this run has is 64MB, measured, not sysfs's LLC (480MB, "
        "/sys/.../index3/size): the temporal kernels clear at cache speed up to 64MB and at "
        'the memory plateau from 128MB (extents table); "in cache" and "beyond '
        'the cache" here mean the measured 64MB.'
    )
    agree = MeasuredCache(32 * MB, 64 * MB, 32 * MB)
    assert cache_line(agree, 256 * MB) == (
        "The cache this run has agrees with sysfs's LLC (32MB): the temporal kernels clear at "
        "cache speed up to 32MB and at the memory plateau from 64MB (extents table)."
    )
    none = MeasuredCache(None, None, 32 * MB)
    assert cache_line(none, 1 * MB) == (
        "The temporal kernels' rates show no cache (fewer than half of them fall from a cache "
        'level to a memory plateau over the extents measured, up to 1MB): "in cache" here '
        "means up to sysfs's LLC (32MB) (extents table)."
    )


# The pages each extent was on -----------------------------------------------------------


def _result(extent, share):
    size = max(extent, 256 * KB)
    return Result(
        benchmark="memset",
        function="k",
        params={"size": size, "chunk": extent if extent < size else 0, "loops": 2},
        bytes_per_loop=extent,
        clock="ns",
        samples=(1000, 1000),
        details={"huge_share": share},
    )


def test_extents_below_2mb_on_4kb_pages_are_said_to_be():
    rs = ResultSet([_result(e, s) for e, s in ((4 * KB, 0.0), (1 * MB, 0.0), (2 * MB, 1.0))])
    pages = pages_by_extent(rs, "2MB THP")
    assert pages == {4 * KB: "4KB", 1 * MB: "4KB", 2 * MB: "2MB THP"}
    assert pages_words(pages) == "4KB pages for 4KB to 1MB, 2MB THP pages for 2MB"
    assert pages_words({2 * MB: "2MB THP", 4 * MB: "2MB THP"}) == "2MB THP pages"
    half = ResultSet([_result(4 * MB, 0.5)])
    assert pages_by_extent(half, "2MB THP") == {4 * MB: "2MB THP for 50% of the buffer"}


# Cache-line allocation needs evidence ---------------------------------------------------


def _knee(step):
    return knee_of({64 * KB: 10e9, 1 * MB: 10e9, 32 * MB: 10e9 * step, 64 * MB: 10e9 * step})


def test_allocation_only_for_a_temporal_step_the_streaming_stores_lack():
    temporal = {"stosb"}
    flat_nt = {"stosb": _knee(2.0), "avx512-nt": _knee(1.0)}
    assert allocation_evidence("stosb", flat_nt, temporal)
    # The non-temporal store steps too: the step is not the temporal store's allocation.
    stepping_nt = {"stosb": _knee(2.0), "avx512-nt": _knee(2.0)}
    assert not allocation_evidence("stosb", stepping_nt, temporal)
    # A non-temporal kernel's own step, and a step with no streaming store beside it.
    assert not allocation_evidence("avx512-nt", stepping_nt, temporal)
    assert not allocation_evidence("stosb", {"stosb": _knee(2.0)}, temporal)


def test_in_cache_by_sysfs_alone_is_read_at_a_quarter_of_the_llc():
    # No fall measured: the rates fall well before sysfs's size where the L3 is shared (a
    # Zen 4 VM's 32 MiB: rep stosb 88 GB/s at 8MB, 30 at 16MB), so a quarter of it.
    rates = _table(
        {
            "stosb": {8 * MB: 88e9, 16 * MB: 30e9, 32 * MB: 40e9},
            "avx512": {8 * MB: 60e9, 16 * MB: 61e9, 32 * MB: 30e9},
        }
    )
    xs = [8 * MB, 16 * MB, 32 * MB]
    (row,) = headline_rows(rates, xs, MeasuredCache(None, None, 32 * MB), "stosb")
    assert (row["extent"], row["fastest"], row["other"]) == (8 * MB, "stosb", "avx512")


def test_the_portable_rows_are_no_answer_for_a_kernel():
    # glibc's memset() beyond the cache, 2% faster than rep stosb: a kernel cannot call it, so
    # the store set beside clear_pages()'s is the fastest of the architecture's own.
    amd = _table(
        {"stosb": {256 * MB: 59.5e9}, "default": {256 * MB: 60.7e9}, "clzero": {256 * MB: 58e9}}
    )
    (row,) = headline_rows(
        amd, [256 * MB], MeasuredCache(None, None, 32 * MB), "stosb", portable={"default"}
    )
    assert (row["fastest"], row["other"]) == ("stosb", "clzero")
