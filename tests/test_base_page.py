"""The kernel's own page sizes: the base page (getpagesize()) and THP's PMD size read from
the system, the runs refused in one line where this kernel's pages differ from what they
would time, and both recorded in the machine every result carries.

No machine here has 16KB or 64KB pages: helpers/fake_sysfs.py's FakePages stands in for
such a kernel (sysconf and hpage_pmd_size); the C core's side is tests/c/test_fault.c's
test_base_page, which passes the page size in.
"""

import pytest
from conftest import check_usage_error, mapping_count
from helpers.cli import run_cli
from helpers.fake_sysfs import FakePages

import pagezero
from pagezero.measure import fault, policy
from pagezero.measure.policy import orders
from pagezero.system import memory

KB, MB = 1 << 10, 1 << 20


@pytest.fixture
def pages(tmp_path, monkeypatch):
    """pages(base, pmd): this process sees a kernel with those page sizes."""
    return lambda base, pmd=2 * MB: FakePages(tmp_path, base, pmd).install(monkeypatch)


def test_the_page_sizes_are_read_from_the_system(pages):
    assert memory.base_page() == 4 * KB  # x86-64, and the machines here
    pages(64 * KB, 512 * MB)
    assert memory.base_page() == 64 * KB
    assert memory.thp_pmd_size() == 512 * MB


def test_a_kernel_without_thp_has_no_pmd_size(monkeypatch, tmp_path):
    monkeypatch.setattr(memory, "THP_PMD_SYSFS", str(tmp_path / "missing"))
    assert memory.thp_pmd_size() is None
    memory.check_page(12, thp=True)  # nothing to check against: the run says what it got


@pytest.mark.parametrize("base", [16 * KB, 64 * KB])
@pytest.mark.parametrize(
    "call",
    [
        lambda: pagezero.faults("1MB", loops=1),
        lambda: pagezero.memset("1MB", loops=1),
        lambda: pagezero.region("1MB"),
    ],
    ids=["faults", "memset", "region"],
)
def test_4kb_pages_are_refused_on_a_kernel_with_larger_base_pages(pages, base, call):
    pages(base)
    before = mapping_count()
    with pytest.raises(ValueError, match=f"this kernel's base page is {base // KB}KB"):
        call()
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)


@pytest.mark.parametrize("bench", ["mmap", "memset"])
def test_the_command_line_refuses_4kb_pages_in_one_line(pages, bench):
    pages(64 * KB, 512 * MB)
    line = check_usage_error(run_cli("mem", bench, "-s", "1MB", "-l", "1", "-p", "4KB"))
    assert "page size 4KB: this kernel's base page is 64KB" in line


def test_thp_of_another_size_is_refused(pages):
    pages(4 * KB, 32 * MB)
    with pytest.raises(ValueError, match="transparent huge pages are 32MB"):
        pagezero.faults("32MB", thp=True, loops=1)
    with pytest.raises(ValueError, match="transparent huge pages are 32MB"):
        fault.plan("4MB", thp=True)
    fault.plan("4MB", thp=False)  # not asked: nothing to refuse


def test_the_policies_refuse_a_kernel_whose_clear_page_is_not_4kb(pages):
    pages(64 * KB, 512 * MB)
    with pytest.raises(ValueError, match="folio\\(\\) walks 4KB pages.* base page is 64KB"):
        policy.plan_folio("2MB")
    with pytest.raises(ValueError, match="preset 'page' walks 4KB pages"):
        orders.batch_bytes("page", 8 * MB)
    assert orders.batch_bytes("8MB", 64 * MB) == 8 * MB  # a batch in bytes means the same


def test_the_results_record_the_base_page_and_thp_size():
    # In the machine every result records (system.machine), read where it is.
    for r in (pagezero.faults("1MB", loops=1)[0], pagezero.memset("1MB", loops=1)[0]):
        sizes = r.machine["page_sizes"]
        assert sizes["base_bytes"] == 4 * KB and sizes["base_source"] == "sysconf(_SC_PAGESIZE)"
        assert sizes["thp_bytes"] == memory.thp_pmd_size()


def test_the_machine_reads_thp_size_under_its_root(tmp_path):
    from pagezero.system.machine import machine

    thp = tmp_path / "sys" / "kernel" / "mm" / "transparent_hugepage"
    thp.mkdir(parents=True)
    (thp / "hpage_pmd_size").write_text("536870912\n")
    assert machine(str(tmp_path))["page_sizes"]["thp_bytes"] == 512 * MB


def test_a_hugetlb_size_without_a_pool_names_the_pools_the_kernel_has(fake, pages):
    # As an arm64 kernel with 64KB pages: 2MB (contiguous PTEs) and 512MB pools, no 1GB one.
    (fake.dir.parent / "hugepages-524288kB").mkdir()
    for name in ("nr_hugepages", "free_hugepages", "resv_hugepages", "surplus_hugepages"):
        (fake.dir.parent / "hugepages-524288kB" / name).write_text("0\n")
    pages(64 * KB, 512 * MB)
    with pytest.raises(pagezero.MappingError, match="no 1GB hugepage pool .*its pools: 2MB, 512MB"):
        pagezero.faults("1GB", page="1GB", loops=1)
