"""Studies that survive the machine changing under them: a sweep whose 2MB hugetlb pages,
chosen when its study started, are gone by the time it maps them runs on the next backing
kernel_backing() chooses (THP, else 4KB) and its section says so; a sweep with no other
choice is left out; a study fails only when nothing is left to run."""

import dataclasses
import errno

import pytest

from pagezero import MappingError
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs import sweeps
from pagezero.studies.report import chunks as report_chunks
from pagezero.studies.report.scales import SCALES
from pagezero.system import backing, hugepages
from pagezero.system.backing import Backing, kernel_backing

GONE = (
    "sweep worker 0 failed: MappingError: [Errno 12] not enough 2MB hugepages: "
    "512 needed, 0 available"
)


def _empty_pool(monkeypatch):
    """The 2MB pool as another process leaves it: no page available to a new mapping."""
    real = hugepages.pool

    def empty(page):
        p = real(page)
        return dataclasses.replace(p, free=0, reserved=0) if p.page == "2MB" else p

    try:
        real("2MB")
    except MappingError:
        pytest.skip("this kernel has no 2MB hugepage pool")
    monkeypatch.setattr(hugepages, "pool", empty)


def test_a_chunk_study_whose_hugepages_vanish_completes_on_the_next_backing(monkeypatch, tmp_path):
    # The study chose hugetlb pages (the pool had them then); another process took them all
    # before its sweeps mapped them. Before: the study failed whole ("512 needed, 0 available").
    monkeypatch.setattr(report_chunks, "kernel_backing", lambda size: Backing("hugetlb"))
    _empty_pool(monkeypatch)
    instead = kernel_backing(16 << 20, refused="gone")  # THP where sysfs allows it
    cfg = dict(SCALES["tiny"], runs=1)
    section = report_chunks.study_chunks(str(tmp_path), cfg, {}, ["generic"], False)
    assert section.failed is None
    rs = ResultSet.load(str(tmp_path / "chunks.json"))
    assert len(rs) == len(cfg["chunks"])
    assert {Backing.of(r.params["page"], r.params["thp"]) for r in rs} == {Backing(instead.how)}
    said = [line for line in section.body if "asked for 2MB hugetlb pages" in line]
    assert len(said) == len(cfg["chunks"])
    assert f"ran on {instead.label} pages instead: not enough 2MB hugepages" in said[0]
    assert "the memset sweep of chunk 4KB, size 16MB" in said[0]


def _result(point):
    params = {k: v for k, v in point.items() if k != "function"}
    return Result(
        benchmark="memset",
        function=point["function"],
        params=params,
        clock="ns",
        bytes_per_loop=point["size"],
        samples=(1000,),
    )


def _fake_sweep(calls, fail):
    def sweep(benchmark, grid, **kw):
        point = {k: v[0] for k, v in grid.items()}
        calls.append(point)
        if fail(point):
            raise RuntimeError(GONE)
        return ResultSet([_result(point)], [{"process": 0}])

    return sweep


def test_a_worker_that_finds_the_pool_empty_falls_back_to_thp(monkeypatch):
    # The pool had the pages at the look (check_available passes), a worker found it empty.
    calls, notes = [], []
    monkeypatch.setattr(hugepages, "check_available", lambda page, needed: None)
    monkeypatch.setattr(backing, "thp_mode", lambda *paths: "madvise")
    monkeypatch.setattr(sweeps, "sweep", _fake_sweep(calls, lambda p: p["page"] == "2MB"))
    point = {"function": "generic", "size": 1 << 30, "loops": 1, **Backing("hugetlb").region_args()}
    rs = sweeps.sweep_points("memset", [point], 3, 1, notes=notes)
    assert [c["page"] for c in calls] == ["2MB", "4KB"]
    assert [(r.params["page"], r.params["thp"]) for r in rs] == [("4KB", True)]
    assert notes == [
        "the memset sweep of size 1GB asked for 2MB hugetlb pages and ran on 2MB THP pages "
        "instead: not enough 2MB hugepages: 512 needed, 0 available"
    ]


def test_a_sweep_with_no_other_pages_is_left_out_and_the_rest_kept(monkeypatch):
    # A fault run's hugetlb size has no other backing: named and left out (the faults study).
    calls, notes = [], []
    monkeypatch.setattr(sweeps, "sweep", _fake_sweep(calls, lambda p: p["page"] == "2MB"))
    points = [
        {"function": "demand", "size": 1 << 30, "page": page, "thp": False, "loops": 1}
        for page in ("4KB", "2MB")
    ]
    rs = sweeps.sweep_points("mmap", points, 1, 0, notes=notes)
    assert [r.params["page"] for r in rs] == ["4KB"]
    assert notes == [
        "the mmap sweep of page 2MB, size 1GB not measured: not enough 2MB hugepages: "
        "512 needed, 0 available"
    ]
    with pytest.raises(MappingError, match="nothing measured") as e:
        sweeps.sweep_points("mmap", points[1:], 1, 0)
    assert e.value.errno == errno.ENOMEM


def test_a_failure_that_is_not_about_pages_is_not_hidden(monkeypatch):
    def broken(benchmark, grid, **kw):
        raise RuntimeError("sweep worker 0 failed: ValueError: something else")

    monkeypatch.setattr(sweeps, "sweep", broken)
    point = {"function": "generic", "size": 4096, "loops": 1}
    with pytest.raises(RuntimeError, match="something else"):
        sweeps.sweep_points("memset", [point], 1, 0)


# Mapped in this process: the look and the mapping a moment apart -------------------------


class _Pool:
    """region() as the kernel answers once another process took the 2MB pool: hugetlb
    mappings refused, others given (as bytearrays); each call's page and thp kept."""

    def __init__(self):
        self.asked = []

    def __call__(self, nbytes, page="4KB", thp=False, populate=True):
        self.asked.append((page, thp))
        if page == "2MB":
            raise MappingError(errno.ENOMEM, "Cannot allocate memory")
        return bytearray(nbytes)


def _pool_looks_full(monkeypatch):
    # The look (kernel_backing) finds the pages; the mapping finds them gone.
    monkeypatch.setattr(hugepages, "available_pages", lambda page, node=None: 1 << 20)
    monkeypatch.setattr(backing, "thp_mode", lambda *paths: "madvise")


def test_advise_maps_its_region_on_thp_when_the_hugepages_go_before_the_mapping(monkeypatch):
    from pagezero.studies.advise import study

    _pool_looks_full(monkeypatch)
    pool = _Pool()
    monkeypatch.setattr(study, "region", pool)
    monkeypatch.setattr(study, "_REGIONS", {})
    assert len(study._shared_region(4 << 20)) == 4 << 20
    assert pool.asked == [("2MB", None), ("4KB", True)]


def test_a_folio_is_mapped_on_thp_when_the_hugepages_go_before_the_mapping(monkeypatch):
    from pagezero.measure.policy import folios, orders

    _pool_looks_full(monkeypatch)
    pool = _Pool()
    monkeypatch.setattr(folios, "region", pool)
    monkeypatch.setattr(orders, "region", pool)  # backed_region()'s
    memory = folios.FolioMemory(4 << 20, "auto")
    assert (memory.backing, memory.page_label) == ("thp", "2MB THP")
    assert "the hugetlb mapping failed" in memory.note
    assert pool.asked[:2] == [("2MB", None), ("4KB", True)]
