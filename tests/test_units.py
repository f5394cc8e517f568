import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagezero.units import format_rate, format_size, parse_page, parse_size


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1", 1),
        ("4096", 4096),
        ("1B", 1),
        ("4KB", 4096),
        ("4kb", 4096),
        ("4Kb", 4096),
        ("2MB", 2 << 20),
        ("1GB", 1 << 30),
        ("1gb", 1 << 30),
        ("3TB", 3 << 40),
        (" 8 MB ", 8 << 20),
        (4096, 4096),
    ],
)
def test_sizes_are_powers_of_1024_case_insensitive(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "bad, why",
    [
        ("0", "at least"),
        (0, "at least"),
        (-1, "negative"),
        ("-1", "expected"),
        ("abc", "expected"),
        ("", "expected"),
        ("1.5GB", "expected"),
        ("12XB", "unknown unit"),
        ("4KiB", "unknown unit"),
        ("99999999TB", "too large"),
        (2**63, "too large"),
        (True, "int or a string"),
        (1.0, "int or a string"),
        (None, "int or a string"),
    ],
)
def test_bad_sizes_say_why(bad, why):
    with pytest.raises(ValueError, match=why):
        parse_size(bad)


def test_zero_is_allowed_where_it_means_the_whole_extent():
    assert parse_size("0", what="chunk", allow_zero=True) == 0


@given(st.integers(1, 2**50))
def test_format_size_round_trips(n):
    assert parse_size(format_size(n)) == n


@pytest.mark.parametrize(
    "page, shift", [("4KB", 12), ("4kb", 12), ("2MB", 21), ("1GB", 30), (4096, 12), (1 << 21, 21)]
)
def test_pages(page, shift):
    assert parse_page(page) == shift


@pytest.mark.parametrize("page", ["3KB", "8KB", "1MB", "0", "x", -4096])
def test_bad_pages(page):
    with pytest.raises(ValueError, match="expected 4KB, 2MB or 1GB"):
        parse_page(page)


@pytest.mark.parametrize(
    "bps, text",
    [
        (512, "     512.000000 bytes/sec"),
        (2048, "       2.000000 KB/sec"),
        (3 * 2**20, "       3.000000 MB/sec"),
        (14.919194 * 2**30, "      14.919194 GB/sec"),
    ],
)
def test_rates_print_as_perf_prints_them(bps, text):
    # perf: printf(" %14lf GB/sec\n", x / K / K / K), K = 1024.
    assert format_rate(bps) == text
