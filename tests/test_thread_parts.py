"""The parts of a shared region start on its mapping's pages (csrc/mem_bench.c).

Each thread prefaults its own part, and the first touch of any byte of a huge page
allocates (and places, with NUMA) all of it: parts that start on 4KB boundaries inside
a 2MB page let thread t fault in memory thread t + 1 clears. So with page="2MB" or
"1GB" or thp=True the parts are whole pages, every one but the last, which takes the
rest; a size under one page per thread is refused. The C core says which parts it gave
(bench_mem's thread_bytes, details["thread_bytes"]; split_region without a run);
tests/c/test_mem.c's test_huge_parts sees each thread prefault its own.
"""

import pytest
from helpers.cpus import needs_2_cpus

import pagezero
from pagezero import _core
from pagezero.measure.mem import plan

MB = 1 << 20


@pytest.mark.parametrize(
    "size, shift, thp, align, parts",
    [
        (6 * MB, 12, _core.THP_SYSTEM, 4096, (3 * MB, 3 * MB)),
        (6 * MB, 12, _core.THP_OFF, 4096, (3 * MB, 3 * MB)),
        # 3MB each would start thread 1 inside a huge page
        (6 * MB, 12, _core.THP_ON, 2 * MB, (2 * MB, 4 * MB)),
        (6 * MB, 21, _core.THP_SYSTEM, 2 * MB, (2 * MB, 4 * MB)),
        (3 << 30, 30, _core.THP_SYSTEM, 1 << 30, (1 << 30, 2 << 30)),
        (MB + 4096, 12, _core.THP_OFF, 4096, (MB // 2, MB // 2 + 4096)),
    ],
)
def test_parts_are_whole_pages_of_the_mapping_the_last_takes_the_rest(
    size, shift, thp, align, parts
):
    assert _core.split_region(size, 2, shift, thp) == (align, parts)


@pytest.mark.parametrize("page, thp, size", [("4KB", True, "3MB"), ("2MB", None, "2MB")])
def test_under_a_page_per_thread_is_refused(page, thp, size):
    with pytest.raises(ValueError, match="at least 2MB of it, a whole page"):
        plan("memset", size, page=page, thp=thp, threads=2)
    # On 4KB pages without THP the same size splits.
    p = plan("memset", size, threads=2)
    assert _core.split_region(p.nbytes, 2) == (4096, (p.nbytes // 2,) * 2)


@needs_2_cpus
@pytest.mark.parametrize(
    "size, kwargs, parts",
    [
        ("6MB", {"thp": True}, (2 * MB, 4 * MB)),
        ("6MB", {}, (3 * MB, 3 * MB)),
        (MB + 4096, {}, (MB // 2, MB // 2 + 4096)),
        ("1MB", {"threads_mode": "private"}, (MB, MB)),
    ],
)
def test_a_run_reports_the_parts_the_c_core_gave(size, kwargs, parts):
    [r] = pagezero.memset(size, threads=2, loops=1, **kwargs)
    assert tuple(r.details["thread_bytes"]) == parts
