"""The parts of a shared region start on its mapping's pages (csrc/mem_bench.c).

Each thread prefaults its own part, and the first touch of any byte of a huge page
allocates (and places, with NUMA) all of it: parts that start on 4KB boundaries inside
a 2MB page let thread t fault in memory thread t + 1 clears. So with page="2MB" or
"1GB" or thp=True the parts are whole pages, every one but the last, which takes the
rest; a size under one page per thread is refused. tests/c/test_mem.c's
test_huge_parts sees the C core's split itself (each thread's part as it prefaults it);
this checks the Python mirror that results report (details["thread_bytes"]).
"""

import pytest
from helpers.cpus import needs_2_cpus

import pagezero
from pagezero.measure.mem import part_align, plan

MB = 1 << 20


@pytest.mark.parametrize(
    "page, thp, parts",
    [
        ("4KB", None, (3 * MB, 3 * MB)),
        ("4KB", False, (3 * MB, 3 * MB)),
        ("4KB", True, (2 * MB, 4 * MB)),  # 3MB each would start thread 1 inside a huge page
        ("2MB", None, (2 * MB, 4 * MB)),
    ],
)
def test_parts_are_whole_pages_of_the_mapping(page, thp, parts):
    p = plan("memset", "6MB", page=page, thp=thp, threads=2)
    assert p.thread_bytes() == parts
    align = part_align(p.shift, thp)
    assert parts[0] % align == 0 and sum(parts) == 6 * MB


def test_1gb_parts():
    assert plan("memset", "3GB", page="1GB", threads=2).thread_bytes() == (1 << 30, 2 << 30)


@pytest.mark.parametrize("page, thp, size", [("4KB", True, "3MB"), ("2MB", None, "2MB")])
def test_under_a_page_per_thread_is_refused(page, thp, size):
    with pytest.raises(ValueError, match="at least 2MB of it, a whole page"):
        plan("memset", size, page=page, thp=thp, threads=2)
    # On 4KB pages without THP the same size splits.
    assert plan("memset", size, threads=2).thread_bytes() == ((int(size[0]) * MB) // 2,) * 2


@needs_2_cpus
def test_a_thp_run_reports_its_whole_page_parts():
    [r] = pagezero.memset("6MB", thp=True, threads=2, loops=1)
    assert tuple(r.details["thread_bytes"]) == (2 * MB, 4 * MB)
