import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagezero.units import (
    format_gbps,
    format_page,
    format_rate,
    format_size,
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
    assert format_rate(3 * 2**30) == "       3.000000 GB/sec"
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


# Every message in full, naming what was asked for (`what`) and the value given.
@pytest.mark.parametrize(
    "bad, message",
    [
        (True, "chunk must be an int or a string such as '4KB', not True"),
        (1.0, "chunk must be an int or a string such as '4KB', not 1.0"),
        (
            "1.5GB",
            "invalid chunk '1.5GB': expected a whole number with an optional unit B, KB, MB, "
            "GB or TB",
        ),
        ("12XB", "invalid chunk '12XB': unknown unit 'XB' (use B, KB, MB, GB or TB)"),
        (-1, "invalid chunk -1: must not be negative"),
        ("0KB", "invalid chunk '0KB': must be at least 1 byte"),
        (2**63, f"invalid chunk {2**63}: too large (more than 2**63-1 bytes)"),
        ("8388608TB", "invalid chunk '8388608TB': too large (more than 2**63-1 bytes)"),
    ],
)
def test_bad_size_messages_in_full(bad, message):
    with pytest.raises(ValueError) as e:
        parse_size(bad, what="chunk")
    assert str(e.value) == message


def test_the_largest_size_is_2_to_the_63_minus_1():
    assert parse_size(2**63 - 1) == 2**63 - 1
    assert parse_size("8388607TB") == 8388607 << 40  # just under 2**63
    assert parse_size("0KB", allow_zero=True) == 0
    assert parse_size("\t2 kB\n") == 2048


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0B"),
        (1, "1B"),
        (1000, "1000B"),
        (1536, "1536B"),
        (3 << 10, "3KB"),
        (1025 << 10, "1025KB"),
        (3 << 20, "3MB"),
        (1 << 30, "1GB"),
        (5 << 40, "5TB"),
        (1024 << 40, "1024TB"),
    ],
)
def test_format_size_takes_the_largest_unit_that_divides(n, text):
    assert format_size(n) == text


@pytest.mark.parametrize(
    "bps, text",
    [
        (1024, "       1.000000 KB/sec"),
        (2**20 - 1, "    1023.999023 KB/sec"),
        (2**20, "       1.000000 MB/sec"),
        (2**30, "       1.000000 GB/sec"),
    ],
)
def test_each_rate_unit_starts_at_its_power_of_1024(bps, text):
    assert format_rate(bps) == text


def test_a_page_that_is_no_size_names_the_value():
    with pytest.raises(ValueError) as e:
        parse_page("2 pages")
    assert str(e.value) == "invalid page size '2 pages': expected 4KB, 2MB or 1GB"
