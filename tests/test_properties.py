"""Properties that hold for any input Hypothesis makes, each against an oracle
written here: the knee of a generated two-level curve, compare()'s symmetry and
indifference to the unit's scale, the thread split's exact cover, and sizes that
read back as they were written. Example counts are small: each property is
cheap, and the suite's time matters more than the hundredth example."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagezero import _core
from pagezero.analysis.compare import compare
from pagezero.analysis.knee import KNEE_MIN_EXTENT, find_knee
from pagezero.results.resultset import Result, ResultSet
from pagezero.units import format_size, parse_size

SETTINGS = settings(max_examples=60, deadline=None)


# The knee -----------------------------------------------------------------------


@SETTINGS
@given(
    n=st.integers(2, 12),
    data=st.data(),
    low=st.floats(1e6, 1e11),
    ratio=st.floats(1.5, 20),
    noise=st.lists(st.floats(-0.01, 0.01), min_size=12, max_size=12),
    below=st.lists(st.floats(1.0, 1e12), max_size=3),
)
def test_the_knee_of_any_two_level_curve_is_its_step(n, data, low, ratio, noise, below):
    # Extents 64KB, 128KB, ...; the rate is `low` below the step and low * ratio
    # from it on, each point off by up to 1%; points under 64KB say nothing.
    step = data.draw(st.integers(1, n - 1))
    extents = [KNEE_MIN_EXTENT << i for i in range(n)]
    rates = [(low * ratio if i >= step else low) * (1 + noise[i]) for i in range(n)]
    small = [(KNEE_MIN_EXTENT >> (i + 1), r) for i, r in enumerate(below)]
    knee, found = find_knee(list(zip(extents, rates)) + small)
    assert knee == extents[step]
    assert found == pytest.approx(ratio, rel=0.03)


# compare ------------------------------------------------------------------------


def result_set(samples_per_run, scale=1):
    """One point measured by one run per list of samples (ns, 4096 bytes a loop)."""
    results = [
        Result(
            benchmark="memset",
            function="generic",
            params={"size": 4096 * scale},
            bytes_per_loop=4096 * scale,
            clock="ns",
            samples=[s * scale for s in samples],
        )
        for samples in samples_per_run
    ]
    runs = [{"repetition": 0, "process": i} for i in range(len(results))]
    return ResultSet(results, runs)


RUNS = st.lists(st.lists(st.integers(500, 5000), min_size=1, max_size=4), min_size=1, max_size=5)
SWAPPED = {"(R)": "(I)", "(I)": "(R)", "~": "~", "?": "?"}


@SETTINGS
@given(a=RUNS, b=RUNS)
def test_compare_is_antisymmetric(a, b):
    [ab] = compare(result_set(a), result_set(b))[0]["changes"]
    [ba] = compare(result_set(b), result_set(a))[0]["changes"]
    # The change one way is the inverse ratio of the other; the test the same.
    assert (1 + ab["change_pct"] / 100) * (1 + ba["change_pct"] / 100) == pytest.approx(1, rel=1e-9)
    assert ab["p_value"] == ba["p_value"] or (
        ab["p_value"] is not None and math.isclose(ab["p_value"], ba["p_value"], rel_tol=1e-9)
    )
    if ab["marker"] and ba["marker"]:  # both beyond the threshold (it is relative to the base)
        assert ba["marker"] == SWAPPED[ab["marker"]]


@SETTINGS
@given(a=RUNS, b=RUNS, scale=st.integers(2, 1000))
def test_compare_does_not_depend_on_the_units_scale(a, b, scale):
    # The same rates, from `scale` times the bytes in `scale` times the ticks.
    [plain] = compare(result_set(a), result_set(b))[0]["changes"]
    [scaled] = compare(result_set(a, scale), result_set(b, scale))[0]["changes"]
    assert scaled["marker"] == plain["marker"]
    assert scaled["change_pct"] == pytest.approx(plain["change_pct"], rel=1e-9, abs=1e-9)


# The thread split --------------------------------------------------------------


@SETTINGS
@given(
    threads=st.integers(1, 64),
    page=st.sampled_from([(12, _core.THP_OFF), (12, _core.THP_ON), (21, 0), (30, 0)]),
    pages=st.integers(1, 64),
    rest=st.floats(0, 1, exclude_max=True),
)
def test_the_thread_split_covers_any_size_exactly_with_disjoint_parts(threads, page, pages, rest):
    # The C core's own split (csrc/mem_bench.c pz_part_len), as bench_mem reports it: at
    # least a page per thread (less is refused: tests/test_thread_parts.py), and a rest.
    align = {(12, _core.THP_ON): 2 << 20}.get(page, 1 << page[0])
    size = threads * align * pages + int(rest * threads * align)
    assert _core.split_region(size, threads, *page)[0] == align
    parts = _core.split_region(size, threads, *page)[1]
    assert len(parts) == threads and all(part > 0 for part in parts)
    assert all(part % align == 0 for part in parts[:-1])  # whole pages but the last
    assert parts[-1] >= parts[0]  # the last takes the rest
    starts = [sum(parts[:i]) for i in range(threads)]
    # Consecutive [start, start + part) ranges from 0 to size: disjoint, no gap.
    assert starts[0] == 0 and starts[-1] + parts[-1] == size


# Sizes ---------------------------------------------------------------------------

UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


@SETTINGS
@given(n=st.integers(1, 2**63 - 1))
def test_any_size_formats_to_a_string_that_parses_back(n):
    text = format_size(n)
    assert parse_size(text) == n
    assert parse_size(text.lower()) == n and parse_size(f" {text} ") == n


@SETTINGS
@given(count=st.integers(1, 1 << 20), unit=st.sampled_from(sorted(UNITS)))
def test_a_whole_number_of_a_unit_reads_as_its_bytes_and_formats_in_the_largest_unit(count, unit):
    n = parse_size(f"{count}{unit}")
    assert n == count * UNITS[unit]
    text = format_size(n)
    number, suffix = int(text.rstrip("BKMGT")), text.lstrip("0123456789")
    assert number * UNITS[suffix] == n
    bigger = [u for u in UNITS.values() if u > UNITS[suffix]]
    assert suffix == "TB" or all(n % u for u in bigger)  # no larger unit divides it
