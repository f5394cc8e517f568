"""Measured conditions on the clearing policies: batch() and folio() with cache, threads, node,
counters.

Mechanisms only, as tests/test_conditions.py: which ranges were flushed before
which clear, which bytes each thread wrote, which node the memory is bound to,
which counts the fake counter source gave. Never how fast anything ran.
"""

import os

import pytest
from conftest import run_python
from helpers.cpus import CPUS, needs_2_cpus

import pagezero
from pagezero import _core
from pagezero.measure.conditions import thread_rates
from pagezero.measure.policy import FolioMemory, plan_batch, plan_folio, run_batch, run_folio
from pagezero.system.memory import numa_nodes

PAGE = 4096
METHODS = [m for m, ok in _core.cache_methods() if ok]


# Cold ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_cold_batch_flushes_every_batch_range_before_it(method):
    # 10 pages in batches of 4: the last batch is 2 pages.
    with pagezero.region(10 * PAGE) as r:
        d = _core.bench_batch(
            [r], "generic", 4, 3, cold=True, flush=method, evict_bytes=1 << 20, trace=True
        )
    expected = [(0, 0, 4 * PAGE), (0, 4 * PAGE, 4 * PAGE), (0, 8 * PAGE, 2 * PAGE)] * 3
    assert d["flushes"] == expected
    assert d["cold_method"] == method and len(d["samples"]) == 3


def test_hot_batch_flushes_nothing():
    with pagezero.region(10 * PAGE) as r:
        d = _core.bench_batch([r], "generic", 4, 2, trace=True)
    assert d["flushes"] == [] and d["cold_method"] == ""


def test_cold_batch_result_says_which_method():
    r = pagezero.batch("256KB", "64KB", loops=2, cache="cold")[0]
    assert r.params["cache"] == "cold"
    assert r.details["cold_method"] == METHODS[0]
    assert r.batches_per_loop == 4 and len(r.samples) == 2


def test_plain_batch_and_folio_keep_old_params():
    r = pagezero.batch("256KB", "64KB", loops=1, backing="4KB")[0]
    assert not {"cache", "threads", "node", "counters"} & set(r.params) and not r.details
    f = pagezero.folio("64KB", loops=1, backing="4KB")[0]
    assert not {"cache", "node", "counters"} & set(f.params) and not f.details


@pytest.mark.parametrize("method", METHODS)
def test_cold_folio_flushes_the_whole_folio_before_each_clear(method):
    with pagezero.region(64 << 10) as folio, pagezero.region(1 << 20) as scrub:
        d = _core.bench_folio(
            folio,
            scrub,
            "sequential",
            0,
            16,
            "generic",
            3,
            "evict",
            cold=True,
            flush=method,
            evict_bytes=1 << 20,
            trace=True,
        )
        assert bytes(memoryview(folio)) == bytes(64 << 10)
    assert d["flushes"] == [(0, 0, 64 << 10)] * 3
    assert d["cold_method"] == method


def test_hot_folio_flushes_nothing():
    with pagezero.region(64 << 10) as folio, pagezero.region(1 << 20) as scrub:
        d = _core.bench_folio(folio, scrub, "sequential", 0, 16, "generic", 2, "evict", trace=True)
    assert d["flushes"] == [] and d["counters"] is None


def test_cold_folio_result():
    r = pagezero.folio("64KB", loops=2, backing="4KB", cache="cold")[0]
    assert r.params["cache"] == "cold" and r.details["cold_method"] == METHODS[0]
    # The neighbourhood's cold baseline stays as it was.
    assert len(r.cold_ns) == 2 and r.cold_method in ("clflush", "evict")


# Threads ------------------------------------------------------------------------


@needs_2_cpus
@pytest.mark.parametrize("cold", [False, True])
def test_batch_threads_clear_exactly_their_own_regions(cold):
    threads = min(CPUS, 4)
    size = 12 * PAGE
    regions = [_core.Region(size, guard=True) for _ in range(threads)]
    try:
        for r in regions:
            memoryview(r)[:] = b"\xff" * size
        d = _core.bench_batch(
            regions,
            "generic",
            5,
            2,
            cold=cold,
            cpus=range(threads),
            evict_bytes=1 << 20,
            trace=True,
        )
        # Every byte of every region cleared; the guard pages fault on any byte beyond.
        for r in regions:
            assert bytes(memoryview(r)) == bytes(size)
    finally:
        for r in regions:
            r.close()
    assert len(d["thread_samples"]) == threads
    if cold:
        # Each thread flushed its own region's batches (-1: outside it), in order, per pass.
        for t in range(threads):
            mine = [(off, n) for th, off, n in d["flushes"] if th == t]
            assert mine == [(0, 5 * PAGE), (5 * PAGE, 5 * PAGE), (10 * PAGE, 2 * PAGE)] * 2


@needs_2_cpus
def test_batch_threads_result():
    r = pagezero.batch("1MB", "256KB", loops=3, threads=2)[0]
    assert r.params["threads"] == 2 and r.bytes_per_loop == 2 << 20
    assert len(r.details["thread_samples"]) == 2 and len(set(r.details["cpus"])) == 2
    assert r.details["thread_bytes"] == (1 << 20, 1 << 20)
    assert len(thread_rates(r)) == 2
    assert len(r.samples) == len(r.pass_worst_ns) == 3


@needs_2_cpus
def test_batch_threads_record_thread_0_steps():
    steps: list = []
    run_batch(plan_batch("64KB", "16KB", loops=2, threads=2), steps=steps)
    assert [(s.first, s.count) for s in steps] == [(0, 4), (4, 4), (8, 4), (12, 4)] * 2


@pytest.mark.parametrize("threads", [0, -1, CPUS + 1, 1.5, True])
def test_batch_bad_threads(threads):
    with pytest.raises(ValueError, match="threads"):
        pagezero.batch("1MB", "256KB", threads=threads)


def test_bad_cache_state():
    with pytest.raises(ValueError, match="cache state"):
        pagezero.batch("1MB", "256KB", cache="lukewarm")
    with pytest.raises(ValueError, match="cache state"):
        pagezero.folio("64KB", cache="lukewarm")


# NUMA ---------------------------------------------------------------------------


def test_batch_binds_its_region_to_node_0():
    with _core.Region(256 << 10, populate=False) as r:
        res = run_batch(plan_batch("256KB", "64KB", loops=1, node=0), r)
        assert _core.numa_policy(r) == (2, 0, 0)  # MPOL_BIND to node 0, page on node 0
    assert res.params["node"] == 0


def test_batch_on_node_0():
    r = pagezero.batch("256KB", "64KB", loops=1, node=0)[0]
    assert r.params["node"] == 0


def test_folio_memory_bound_to_node_0():
    mem = FolioMemory(64 << 10, "4KB", node=0)
    try:
        r = run_folio(plan_folio("64KB", loops=1, backing="4KB", node=0), mem)
        assert _core.numa_policy(mem.folio) == (2, 0, 0)
    finally:
        mem.close()
    assert r.params["node"] == 0


@pytest.mark.parametrize("fn", ["batch", "folio"])
def test_missing_node_refused(fn):
    missing = max(numa_nodes()) + 1
    with pytest.raises(ValueError, match=f"node {missing} does not exist"):
        getattr(pagezero, fn)(node=missing)


# Counters -----------------------------------------------------------------------


def test_batch_counters_with_fake_source(switch):
    switch(PAGEZERO_FAKE_COUNTERS="1")
    threads = 2 if CPUS >= 2 else 1
    r = pagezero.batch("256KB", "64KB", loops=3, counters=True, threads=threads)[0]
    names = _core.counter_names()
    assert tuple(r.details["counters"]) == names
    for i, name in enumerate(names):
        # The fake counter i advances (i + 1) * 1000 per read, read twice a pass per thread.
        assert r.details["counters"][name] == ((i + 1) * 1000 * threads,) * 3
    assert "fake" in r.details["counters_source"] and r.params["counters"] is True


def test_folio_counters_with_fake_source(switch):
    switch(PAGEZERO_FAKE_COUNTERS="1")
    r = pagezero.folio("64KB", loops=2, backing="4KB", counters=True)[0]
    for i, name in enumerate(_core.counter_names()):
        assert r.details["counters"][name] == ((i + 1) * 1000,) * 2


@pytest.mark.parametrize("fn", ["batch", "folio"])
@pytest.mark.parametrize(
    "fault, words",
    [
        ("PAGEZERO_FAKE_MULTIPLEXED", "multiplexed"),
        ("PAGEZERO_FAIL_COUNTER_READ", "reading the hardware"),
    ],
)
def test_counter_loop_failures_are_not_called_an_open_failure(switch, fn, fault, words):
    # Both come back from a timed loop as -EBUSY / -EIO with the counters
    # open; neither may read as "perf_event_open(...) failed".
    switch(PAGEZERO_FAKE_COUNTERS="1", **{fault: "1"})
    kwargs = (
        {"size": "256KB", "batch": "64KB"} if fn == "batch" else {"size": "64KB", "backing": "4KB"}
    )
    with pytest.raises(pagezero.PagezeroError, match=words) as e:
        getattr(pagezero, fn)(loops=2, counters=True, **kwargs)
    assert "perf_event_open" not in str(e.value)


@pytest.mark.parametrize("fn", ["batch", "folio"])
def test_counters_without_pmu_fail_clearly(fn, without_pmu):
    kwargs = {"size": "256KB", "batch": "64KB"} if fn == "batch" else {"size": "64KB"}
    with pytest.raises(pagezero.UnavailableError, match="no PMU"):
        getattr(pagezero, fn)(loops=1, counters=True, **kwargs)


# Command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["batch", "-t", "0"],
        ["batch", "-t", "-2"],
        ["batch", "-t", str(CPUS + 1)],
        ["batch", "--node", "4096"],
        ["batch", "--cache", "lukewarm"],
        ["folio", "--node", "4096"],
        ["folio", "--cache", "lukewarm"],
    ],
)
def test_cli_bad_input_exits_2(args):
    p = run_python("-m", "pagezero", *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("pagezero: error:") and "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [["batch", "-s", "256KB", "-b", "64KB"], ["folio", "-p", "64KB"]])
def test_cli_counters_without_pmu_exit_1(args, without_pmu):
    env = {k: v for k, v in os.environ.items() if k != "PAGEZERO_FAKE_COUNTERS"}
    p = run_python("-m", "pagezero", *args, "--counters", env=env)
    assert p.returncode == 1 and "no PMU" in p.stderr and "Traceback" not in p.stderr


def test_cli_batch_cold_threads_counters_node():
    threads = "2" if CPUS >= 2 else "1"
    env = dict(os.environ, PAGEZERO_FAKE_COUNTERS="1")
    p = run_python(
        "-m",
        "pagezero",
        "batch",
        "-s",
        "1MB",
        "-b",
        "256KB",
        "-l",
        "2",
        "--cache",
        "cold",
        "-t",
        threads,
        "--counters",
        "--node",
        "0",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert "cache cold" in p.stdout and "cycles" in p.stdout and "node 0" in p.stdout
    if threads == "2":
        assert "2 threads on CPUs" in p.stdout and "GB/s/thread" in p.stdout


def test_cli_folio_cold_counters_node():
    env = dict(os.environ, PAGEZERO_FAKE_COUNTERS="1")
    p = run_python(
        "-m",
        "pagezero",
        "folio",
        "-p",
        "64KB",
        "--backing",
        "4KB",
        "-l",
        "2",
        "--strategy",
        "sequential",
        "--cache",
        "cold",
        "--counters",
        "--node",
        "0",
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert "cache cold" in p.stdout and "sequential counters" in p.stdout
