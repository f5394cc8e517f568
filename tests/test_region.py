"""Regions: page sizes, THP, guard pages, and nothing left mapped."""

import pytest
from conftest import hugepage_shortage, is_mapped, mapping_count, require_hugepages, run_python

import pagezero


def test_a_region_is_a_writable_buffer_and_is_unmapped_on_close():
    r = pagezero.region("1MB", thp=False)
    address = r.address
    assert is_mapped(address) and is_mapped(address + r.size - 1)
    assert r.size == 1 << 20 and r.page_size == 4096 and not r.closed
    mv = memoryview(r)
    mv[:4] = b"abcd"
    assert bytes(mv[:4]) == b"abcd"
    with pytest.raises(BufferError):
        r.close()  # unmapping under a live view would be a use-after-free
    mv.release()
    r.close()
    assert r.closed and r.address == 0
    with pytest.raises(ValueError, match="closed"):
        memoryview(r)
    assert not is_mapped(address) and not is_mapped(address + (1 << 20) - 1)


def test_sizes_round_up_to_the_page():
    with pagezero.region(5000) as r:
        assert r.size == 8192


@pytest.mark.parametrize("side", ["below", "above"])
def test_guard_pages_fault(side):
    # A write one byte outside must kill the process with SIGSEGV.
    code = f"""
import ctypes, pagezero
r = pagezero.region(4096, guard=True)
addr = r.address - 1 if "{side}" == "below" else r.address + r.size
ctypes.c_char.from_address(addr).value = b"x"
"""
    proc = run_python("-c", code)
    assert proc.returncode == -11


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(size=0), "at least"),
        (dict(size="1MB", page="3MB"), "page size"),
        (dict(size="2MB", page="2MB", guard=True), "guard"),
        (dict(size="2MB", page="2MB", thp=True), "4KB pages only"),
        (dict(size="1MB", thp="yes"), "thp"),
    ],
)
def test_bad_regions_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pagezero.region(**kwargs)


def test_more_than_the_memory_available_is_refused_before_mapping():
    before = mapping_count()
    with pytest.raises(pagezero.MappingError, match="too large") as info:
        pagezero.region("64TB")
    assert info.value.errno == 12
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)


def test_2mb_hugetlb_region():
    require_hugepages("2MB", 2)
    with pagezero.region("3MB", page="2MB") as r:
        assert r.size == 4 << 20 and r.page_size == 2 << 20
        mv = memoryview(r)
        pagezero.clear(mv)
        assert mv[-1] == 0
        mv.release()


@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("page", ["2MB", "1GB"])
def test_hugepage_shortage_names_the_fix(page):
    before = mapping_count()
    with pytest.raises(pagezero.MappingError, match="insufficient hugepages.*nr_hugepages"):
        pagezero.region(hugepage_shortage(page), page=page)
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)


def test_thp_can_be_asked_for():
    # Whether THP is granted is the system's call; asking must work either way.
    with pagezero.region("4MB", thp=True) as r:
        assert r.size == 4 << 20
