"""The fault workloads through the Python API: what each workload leaves in
memory, the page-size report, threads, latencies, headroom and the errors.

Regions are inspected through fault_pass() (helpers/faults.py), one pass of a workload
as a run does but leaves the region mapped. No assertion is made on how fast
anything is.
"""

import ctypes
import os
import platform
import signal
import threading
import time

import numpy as np
import pytest
from conftest import mapping_count, mem_available, never_available, require_hugepages
from helpers.cpus import CPUS, needs_2_cpus
from helpers.faults import cut_short_memset, fault_pass, loops_run

import pagezero
from pagezero import _core
from pagezero.interrupt import STOP_SIGNALS, Interrupted, signals_interrupt
from pagezero.measure import conditions, fault

MB = 1 << 20
SIZE = 8 * MB
MARK = 0x5A
HUGE = {"2MB": 21, "1GB": 30}


# Helpers ----------------------------------------------------------------------


def written(region):
    """(offsets, values) of the region's non-zero bytes."""
    mv = memoryview(region)
    try:
        a = np.frombuffer(mv, dtype=np.uint8)
        idx = np.flatnonzero(a)
        vals = a[idx].copy()
        del a
    finally:
        mv.release()
    return idx, vals


def expected_offsets(npages, page, seed):
    """Where demand writes: byte 0 of each page, or rand() % page after srand(seed)."""
    if not seed:
        return np.arange(npages, dtype=np.int64) * page
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("the random offsets follow glibc's rand(); this is not glibc")
    libc = ctypes.CDLL(None)
    libc.srand(ctypes.c_uint(seed))
    return np.array([i * page + libc.rand() % page for i in range(npages)], dtype=np.int64)


def check_contents(region, function, page, seed):
    idx, vals = written(region)
    if function == "demand":
        np.testing.assert_array_equal(idx, expected_offsets(region.size // page, page, seed))
        assert (vals == MARK).all()
    else:
        assert idx.size == 0, f"{function} wrote {idx.size} bytes"


# What each workload leaves --------------------------------------------------------


@pytest.mark.parametrize("function", fault.WORKLOADS)
@pytest.mark.parametrize("seed", [0, 12345])
@pytest.mark.parametrize("thp", [False, True])
def test_4kb_workloads_leave_zeros_but_the_bytes_written(function, seed, thp):
    region, pages = fault_pass(SIZE, "4KB", function, thp=thp, seed=seed)
    with region:
        assert region.size == SIZE
        start = region.address
        check_contents(region, function, 4096, seed)
    assert pages["rss"] == SIZE  # every page faulted in
    assert pages["hugetlb"] == 0
    if not thp:
        assert pages["anon_huge"] == 0  # refused means refused
    # Nothing of the region stays mapped. (Counting all mappings before and after
    # also counted the allocator's: a first-time arena made it one more, now and then.)
    assert not _mapped_over(start, SIZE)


def _mapped_over(start, size):
    """The lines of /proc/self/maps overlapping [start, start + size)."""
    with open("/proc/self/maps") as f:
        spans = [line.split()[0].split("-") for line in f]
    return [(lo, hi) for lo, hi in spans if int(lo, 16) < start + size and int(hi, 16) > start]


@pytest.mark.parametrize("page", ["2MB", "1GB"])
@pytest.mark.parametrize("function", fault.WORKLOADS)
def test_hugetlb_workloads_leave_zeros_but_the_bytes_written(page, function):
    count = 2 if page == "2MB" else 1
    require_hugepages(page, count)
    size = count << HUGE[page]
    seed = 7 if function == "demand" else 0
    region, pages = fault_pass(size, page, function, seed=seed)
    with region:
        check_contents(region, function, 1 << HUGE[page], seed)
    assert pages["hugetlb"] == size and pages["kernel_page"] == 1 << HUGE[page]
    assert pages["anon_huge"] == 0


def test_latency_pass_writes_the_same_bytes():
    region, _ = fault_pass(SIZE, function="demand", seed=3, latency=True)
    with region:
        check_contents(region, "demand", 4096, 3)


# populate has no fault to time (latency=True): refused, see test_bad_arguments.
@pytest.mark.parametrize(
    "function, latency",
    [("demand", False), ("demand", True), ("populate", False)]
    + [("populate-write", False), ("populate-write", True)],
)
def test_perf_touch_adds_the_page_index_to_each_page_after_every_workload(function, latency):
    region, _ = fault_pass(SIZE, function=function, latency=latency, touch="perf")
    with region:
        with memoryview(region) as view:
            pages = np.frombuffer(view, dtype=np.uint8).reshape(-1, 4096).copy()
    # perf's mmap_page_touch over a zeroed page: byte 0 of page i = 0 + i.
    want = np.zeros_like(pages)
    want[:, 0] = np.arange(len(pages)) % 256
    assert np.array_equal(pages, want)


def test_the_touch_is_recorded():
    write = pagezero.faults(SIZE, loops=1)[0]
    perf = pagezero.faults(SIZE, loops=1, touch="perf")[0]
    assert write.details["touch"] == "write" and "touch" not in write.params
    assert perf.details["touch"] == "perf" and perf.params["touch"] == "perf"
    assert write.label() != perf.label()  # not one point


# Runs ------------------------------------------------------------------------------


@pytest.mark.parametrize("function", fault.WORKLOADS)
def test_a_run_has_one_sample_per_loop_and_unmaps(function):
    # A first run leaves what glibc keeps for the next thread (its stack
    # cache, a malloc arena): mappings, but not a run's regions.
    pagezero.faults(SIZE, function=function, loops=1)
    before = mapping_count()
    r = pagezero.faults(SIZE, function=function, loops=3)[0]
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)
    assert r.benchmark == "mmap" and r.function == function
    # A loaded machine's first loop can be left out as warming up (test_warm_up_loops_...).
    assert loops_run(r) == 3
    assert r.bytes_per_loop == SIZE and r.bytes_per_sec > 0
    assert r.params["size"] == SIZE and r.params["page"] == "4KB"
    assert r.params["threads"] == 1 and r.params["thp"] is False
    assert len(r.details["pages"]) == r.loops
    assert all(pg["rss"] == SIZE for pg in r.details["pages"])
    assert r.details["thread_samples"] == (r.samples,)
    assert r.details["latency"] is None


@needs_2_cpus
def test_threads_fault_their_own_regions():
    r = pagezero.faults(SIZE, threads=2, loops=2, seed=5)[0]
    samples = r.details["thread_samples"]
    assert loops_run(r) == 2 and len(samples) == 2 and all(len(s) == r.loops for s in samples)
    assert r.bytes_per_loop == 2 * SIZE
    # The wall time runs from the first start to the last end.
    for loop, wall in enumerate(r.samples):
        assert all(s[loop] <= wall for s in samples)
    assert all(pg["rss"] == 2 * SIZE for pg in r.details["pages"])
    rates = conditions.thread_rates(r)
    assert len(rates) == 2 and min(rates) > 0
    mean, pct = conditions.thread_spread(r)
    assert mean > 0 and pct >= 0


@pytest.mark.parametrize("function", ["demand", "populate-write"])
def test_latencies_of_4kb_groups(function):
    r = pagezero.faults(SIZE, function=function, loops=2, latency=True)[0]
    lat = r.details["latency"]
    assert lat["unit_bytes"] == 64 * 1024
    assert lat["n"] == 2 * SIZE // (64 * 1024)
    assert 0 < lat["min_ns"] <= lat["p50_ns"] <= lat["p99_ns"] <= lat["max_ns"]


def test_latency_unit_follows_the_fault_size():
    def unit(shift, thp, nbytes, latency=True):
        return fault.FaultPlan(nbytes, shift, thp, 1, 1, 0, "ns", latency).lat_unit

    assert unit(12, False, SIZE) == 64 * 1024
    assert unit(12, False, 12 * 1024) == 4096  # not a whole number of groups
    assert unit(12, True, SIZE) == 2 * MB
    assert unit(21, False, SIZE) == 2 * MB
    assert unit(30, False, 1 << 30) == 1 << 30
    assert unit(21, False, SIZE, latency=False) == 0  # no latencies, no unit


def test_2mb_hugetlb_run_with_threads_and_latency():
    require_hugepages("2MB", 4)
    r = pagezero.faults("4MB", page="2MB", threads=2, loops=2, latency=True)[0]
    lat = r.details["latency"]
    assert lat["unit_bytes"] == 2 * MB and lat["n"] == 2 * 2 * 2
    report = fault.page_report(r)
    assert report["got"] == "2MB hugetlb" and not report["fallback"]
    assert report["hugetlb_bytes"] == 8 * MB


def test_1gb_fault_latency():
    require_hugepages("1GB", 1)
    r = pagezero.faults("1GB", page="1GB", loops=1, latency=True)[0]
    lat = r.details["latency"]
    assert lat["n"] == 1 and lat["unit_bytes"] == 1 << 30 and lat["max_ns"] > 0
    assert fault.page_report(r)["got"] == "1GB hugetlb"


def test_results_with_details_survive_json(tmp_path):
    r = pagezero.faults(SIZE, threads=2, loops=2, latency=True)[0]
    path = tmp_path / "faults.json"
    pagezero.save_results(path, [r])
    (back,) = pagezero.load_results(path)
    assert back.to_dict() == r.to_dict()
    assert conditions.thread_rates(back) == conditions.thread_rates(r)
    with pytest.raises(TypeError):
        r.details["latency"]["n"] = 0  # a value: frozen all the way down


# The page-size report ----------------------------------------------------------------


def synthetic(page="4KB", thp=False, pages=None, threads=1):
    size = 4 * MB
    return pagezero.Result(
        benchmark="mmap",
        function="demand",
        bytes_per_loop=size * threads,
        clock="ns",
        samples=(1000,),
        params={
            "size": size,
            "page": page,
            "loops": 1,
            "threads": threads,
            "seed": 0,
            "thp": thp,
            "latency": False,
        },
        details={"thread_samples": ((1000,),) * threads, "pages": (pages,), "latency": None},
    )


def pg(rss=4 * MB, anon_huge=0, hugetlb=0, kernel_page=4096):
    return {"rss": rss, "anon_huge": anon_huge, "hugetlb": hugetlb, "kernel_page": kernel_page}


@pytest.mark.parametrize(
    "thp, pages, got, fallback",
    [
        (False, pg(), "4KB", False),
        (True, pg(anon_huge=4 * MB), "2MB THP", False),
        (True, pg(), "4KB", True),  # THP asked, none came
        (True, pg(anon_huge=2 * MB), "2MB THP for 2MB, 4KB for the rest", True),
        (False, pg(anon_huge=2 * MB), "2MB THP for 2MB, 4KB for the rest", True),
        (None, pg(anon_huge=4 * MB), "2MB THP", False),
    ],
)
def test_page_report_never_hides_a_thp_fallback(thp, pages, got, fallback):
    report = fault.page_report(synthetic(thp=thp, pages=pages))
    assert report["got"] == got and report["fallback"] is fallback
    assert got in report["text"]


def test_page_report_says_when_pages_are_missing():
    report = fault.page_report(synthetic(pages=pg(rss=3 * MB)))
    assert "only 3MB of 4MB resident" in report["text"]


def test_page_report_for_hugetlb():
    report = fault.page_report(
        synthetic(page="2MB", pages=pg(rss=0, hugetlb=4 * MB, kernel_page=2 * MB))
    )
    assert report["asked"] == report["got"] == "2MB hugetlb" and not report["fallback"]


def smaps_bytes(start, size, field):
    """The sum of `field` (e.g. "AnonHugePages") over the mappings inside
    [start, start + size), read from /proc/self/smaps here in Python: an oracle
    apart from the C core's own reading of the same file."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo >= start and hi <= start + size
            elif inside and head == f"{field}:":
                total += int(line.split()[1]) * 1024
    return total


def test_thp_counters_agree_with_smaps_read_apart():
    if pagezero.machine()["thp"]["enabled"] in (None, "never"):
        pytest.skip("transparent huge pages are disabled (or unknown) on this machine")
    region, pages = fault_pass(SIZE, function="demand", thp=True)
    with region:
        anon_huge = smaps_bytes(region.address, SIZE, "AnonHugePages")
        rss = smaps_bytes(region.address, SIZE, "Rss")
    assert pages["anon_huge"] == anon_huge and pages["rss"] == rss == SIZE


@pytest.mark.parametrize("anon_huge, fallback", [(4 * MB, False), (2 * MB, True), (0, True)])
def test_thp_fallback_follows_the_smaps_counters(anon_huge, fallback):
    # The counters a THP run reads, as smaps would give them: any 4KB page in
    # the region is a fallback, and the report says how much.
    r = synthetic(thp=True, pages=pg(rss=4 * MB, anon_huge=anon_huge))
    report = fault.page_report(r)
    assert report["fallback"] is fallback and report["thp_bytes"] == anon_huge


# Headroom ------------------------------------------------------------------------------


def test_headroom_sets_the_fault_rate_beside_the_best_clear():
    h = pagezero.headroom("4MB", loops=1, clear_kernels=["default", "generic"])
    assert h.fault.benchmark == "mmap" and h.fault.function == "demand"
    assert [c.function for c in h.clears] == ["default", "generic"]
    assert all(c.params["chunk"] == 4096 and c.params["size"] == 4 * MB for c in h.clears)
    assert h.best in h.clears
    assert h.ratio == h.best.bytes_per_sec / h.fault.bytes_per_sec > 0


def test_headroom_stopped_during_the_clears_keeps_the_faults_and_the_clears(monkeypatch):
    cut_short_memset(monkeypatch, at=2)
    with pytest.raises(Interrupted) as caught:
        pagezero.headroom("4MB", loops=2, clear_kernels=["default", "generic"])
    rs = caught.value.partial
    assert caught.value.signum == signal.SIGTERM and rs.interrupted == "SIGTERM"
    assert [(r.benchmark, r.function, loops_run(r)) for r in rs] == [
        ("mmap", "demand", 2),
        ("memset", "default", 2),
        ("memset", "generic", 1),
    ]
    assert rs.results[-1].interrupted == "SIGTERM"


# Signals ------------------------------------------------------------------------------


def test_a_complete_run_says_so():
    raw = _core.bench_fault("demand", MB, 12, 2, 3, 2, 0, "ns", 0)
    assert raw["loops_done"] == 3 and raw["interrupted"] is None
    assert len(raw["wall"]) == len(raw["pages"]) == 3
    assert [len(t) for t in raw["threads"]] == [3, 3]


@pytest.mark.parametrize("sig", STOP_SIGNALS)
def test_a_signal_stops_a_run_and_keeps_the_loops_done(sig, stop_signals_as_usual):
    handlers = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    # Once this process has had 0.3 s more CPU (its run's threads): so much faulting done
    # however busy the machine, where half a second of wall time could pass before the
    # first loop on a loaded one.
    start, cancelled = time.process_time(), threading.Event()

    def signal_after_some_work():
        while time.process_time() - start < 0.3:
            if cancelled.wait(0.01):
                return
        os.kill(os.getpid(), sig)

    timer = threading.Thread(target=signal_after_some_work)
    timer.start()
    try:
        # Python's handlers as a net: without the C core's, the signal would
        # wait for the end of the run (minutes) and then raise, partial None.
        with signals_interrupt(), pytest.raises(Interrupted) as caught:
            pagezero.faults("4MB", threads=2, loops=5000, latency=True)
    finally:
        cancelled.set()
        timer.join()
    rs = caught.value.partial  # a ResultSet, as the call's answer would have been
    assert caught.value.signum == sig and rs.interrupted == sig.name
    r = rs[0]
    assert r.interrupted == sig.name
    # Only the completed loops, every per-loop value cut to them.
    assert 0 < r.loops < 5000
    assert len(r.details["pages"]) == r.loops
    assert [len(s) for s in r.details["thread_samples"]] == [r.loops, r.loops]
    assert all(pg["rss"] == 2 * 4 * MB for pg in r.details["pages"])
    # The latency of every loop run, those the warm-up rule left out of the rate too.
    assert r.details["latency"]["n"] == loops_run(r) * 2 * (4 * MB // (64 << 10))
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == handlers


# Errors: clear, and nothing left behind --------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(function="fault"), "unknown workload"),
        (dict(page="3MB"), "page size"),
        (dict(seed="abc"), "seed must be an int"),
        (dict(seed=1.5), "seed must be an int"),
        (dict(seed=-1), "seed must be between"),
        (dict(seed=2**32), "seed must be between"),
        (dict(threads=0), "threads must be at least 1"),
        (dict(threads=-2), "threads must be at least 1"),
        (dict(threads=CPUS + 1), f"more than the {CPUS} CPUs this process may run on"),
        (dict(threads=True), "threads must be an int"),
        (dict(loops=0), "loops must be between"),
        (dict(size=0), "at least 1 byte"),
        (dict(size="5KB"), "not a whole number of 4KB pages"),
        (dict(size="3MB", page="2MB"), "not a whole number of 2MB pages"),
        (dict(thp=True, page="2MB", size="2MB"), "4KB pages only"),
        (dict(clock="cycles", threads=2), "cycles clock counts the thread"),
        (dict(clock="sundial"), "unknown clock"),
        (dict(function="populate", latency=True), "no fault to time"),
        (dict(latency="yes"), "latency must be True or False"),
        (dict(touch="read"), "unknown touch 'read'"),
    ],
)
def test_bad_arguments_are_value_errors(kwargs, match):
    kwargs.setdefault("size", "1MB")
    before = mapping_count()
    with pytest.raises(ValueError, match=match):
        pagezero.faults(loops=kwargs.pop("loops", 1), **kwargs)
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)


def test_more_threads_than_memory_allows():
    # Twice the memory available, so that no change in MemAvailable between
    # here and the check can let the run start (it would end in the OOM killer).
    size = 2 * mem_available() // CPUS // 4096 * 4096
    before = mapping_count()
    with pytest.raises(pagezero.MappingError, match=f"too large for {CPUS} thread") as info:
        pagezero.faults(size, threads=CPUS, loops=1)
    assert info.value.errno == 12
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)


@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("page", ["2MB", "1GB"])
def test_hugepage_shortage_names_the_sysfs_file_and_changes_nothing(page):
    pools_before = pagezero.hugepage_pools()
    before = mapping_count()
    with pytest.raises(pagezero.MappingError, match=f"not enough {page} hugepages.*nr_hugepages"):
        pagezero.faults(never_available(page), page=page, loops=1)
    assert mapping_count() <= before  # none added (an arena Python unmapped is no leak)
    assert pagezero.hugepage_pools()[page].total == pools_before[page].total


def test_too_many_threads_for_the_hugepage_pool():
    with pytest.raises(pagezero.MappingError, match="not enough 2MB hugepages"):
        pagezero.faults(never_available("2MB", CPUS), page="2MB", threads=CPUS, loops=1)


def test_the_c_core_checks_its_own_arguments():
    # The Python layer checks first; the C core must not trust it.
    bad = [
        (("nope", MB, 12, 2, 1, 1, 0, "ns", 0), "unknown workload"),
        (("demand", MB + 1, 12, 2, 1, 1, 0, "ns", 0), "refused its arguments"),
        (("demand", MB, 13, 2, 1, 1, 0, "ns", 0), "page shift"),
        (("demand", MB, 12, 2, 0, 1, 0, "ns", 0), "loops"),
        (("demand", MB, 12, 2, 1, 0, 0, "ns", 0), "threads"),
        (("demand", MB, 12, 2, 1, 1, 0, "ns", 4000), "refused its arguments"),
        (("populate", MB, 12, 2, 1, 1, 0, "ns", 4096), "refused its arguments"),
        (("demand", MB, 12, 2, 1, 1, 0, "sundial", 0), "unknown clock"),
        (("demand", 2 * MB, 21, 1, 1, 1, 0, "ns", 0), "refused its arguments"),
    ]
    for args, match in bad:
        with pytest.raises(ValueError, match=match):
            _core.bench_fault(*args)
    with pytest.raises(ValueError, match="unknown workload"):
        _core.fault_pass("nope", MB, 12, 2, 0)
