"""Clearing benchmarks as tests, for pagezero's pytest plugin.

Save on the base, compare on the change:

    pytest examples/ci --pagezero-save=baseline
    pytest examples/ci --pagezero-compare=baseline --pagezero-compare-fail=5

Each measurement runs in 3 fresh processes (runs=3, the fixture's default),
so the comparison can tell the noise between processes from a change: a test
fails only when one of its points is more than 5% slower than the baseline
AND significantly so (Welch's t-test on the logs of per-run medians).
The annotations let mypy check each call's arguments against pagezero's.
"""

import pytest

from pagezero.pytest_plugin import Bench


def test_clear_1mb(pagezero_bench: Bench) -> None:
    # An extent that fits the L2 of most CPUs: what one clear_page() call sees
    # on a hot cache.
    pagezero_bench.memset(size="1MB", loops=20)


def test_clear_a_2mb_folio(pagezero_bench: Bench) -> None:
    # The kernel's folio_zero_user() path: a 2MB folio cleared around the
    # faulting page, then the neighbourhood touched.
    pagezero_bench.folio(size="2MB", loops=5)


@pytest.mark.pagezero(hugepages={"2MB": 32})
def test_fault_in_2mb_hugetlb_pages(pagezero_bench: Bench) -> None:
    # The kernel's own clearing on demand faults of 2MB hugetlb pages: 32
    # pages a round (skipped without them; --pagezero-reserve reserves them).
    pagezero_bench.mmap(size="64MB", page="2MB", loops=3)


@pytest.mark.pagezero(kernels=["x86-64-stosb", "x86-64-clzero"])
def test_clzero_keeps_up_with_rep_stosb(pagezero_bench: Bench) -> None:
    # A test may also assert on its own figures: here a ratio of two kernels
    # measured in the same test, beyond the LLC of the CPUs that have clzero.
    # bytes_per_sec: the median of the runs' medians, as the comparison uses (None
    # for a set a stop signal left empty).
    stosb = pagezero_bench.memset(size="64MB", function="x86-64-stosb", loops=5).bytes_per_sec
    clzero = pagezero_bench.memset(size="64MB", function="x86-64-clzero", loops=5).bytes_per_sec
    assert stosb and clzero and clzero > 0.5 * stosb
