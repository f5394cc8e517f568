import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagezero.units import (
    format_gbps,
    format_page,
    format_rate,
    format_size,
    gb_per_sec,
    gbps,
    parse_page,
    parse_size,
)


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


@pytest.mark.parametrize("shift, text", [(12, "4KB"), (21, "2MB"), (30, "1GB")])
def test_page_names_read_back(shift, text):
    assert format_page(shift) == text and parse_page(text) == shift


def test_perfs_gb_is_2_to_the_30_and_gbs_10_to_the_9():
    # perf's "GB/sec" is 2**30 bytes a second; "GB/s" is 10**9 (the report's).
    assert gb_per_sec(3 * 2**30) == 3.0 and gb_per_sec(2**29) == 0.5
    assert gbps(3e9) == 3.0 and gbps(5e8) == 0.5
    assert format_gbps(2.5e9) == "2.5 GB/s" and format_gbps(2.5e9, digits=2) == "2.50 GB/s"
    assert format_gbps(None) == "-"


@pytest.mark.parametrize(
    "bps, text",
    [
        (5, "       5.000000 bytes/sec"),
        (1023, "    1023.000000 bytes/sec"),
        (2**40, "    1024.000000 GB/sec"),
    ],
)
def test_rate_units_switch_at_1024(bps, text):
    assert format_rate(bps) == text
