"""Measured conditions: cache-cold clears, threads, NUMA placement, hardware counters.

Mechanisms only: which lines were flushed before which call, which bytes
each thread wrote, which node a buffer is bound to, which counts a counter
source gave. Never how fast anything ran.
"""

import os
import time

import pytest
from conftest import run_python
from helpers.cpus import CPUS, needs_2_cpus

import pagezero
from pagezero import _core
from pagezero.measure.conditions import choose_cpus, thread_rates, thread_spread
from pagezero.measure.mem import scaling
from pagezero.system.memory import numa_nodes

FILL = "generic"  # any fill byte, on every architecture
METHODS = [m for m, ok in _core.cache_methods() if ok]


# Cold ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("size,chunk", [(64 << 10, 4 << 10), (40 << 10, 16 << 10)])
def test_cold_flushes_each_chunk_before_its_call(method, size, chunk):
    with pagezero.region(size) as r:
        events = _core.run_threads_on(r, FILL, 1, chunk, 3, 0, 0, True, method, 1 << 20)
    assert events[0] == (0, "start", 0, 1)
    chunks = [(off, min(chunk, size - off)) for off in range(0, size, chunk)]
    expected = [(0, ev, off, n) for _ in range(3) for off, n in chunks for ev in ("flush", "clear")]
    assert events[1:] == expected


def test_hot_mode_flushes_nothing():
    with pagezero.region(64 << 10) as r:
        events = _core.run_threads_on(r, FILL, 1, 4096, 3, 0, 0, False, "")
    assert events == [(0, "start", 0, 1)]


def test_cold_result_says_which_method():
    r = pagezero.memset("256KB", chunk="64KB", function=FILL, cache="cold", loops=2)[0]
    assert r.params["cache"] == "cold"
    assert r.details["cold_method"] == METHODS[0]
    assert len(r.samples) == 2 and r.bytes_per_loop == 256 << 10


def test_hot_default_keeps_old_params():
    r = pagezero.memset("64KB", function=FILL, loops=1)[0]
    assert "cache" not in r.params and not r.details


def test_cold_memcpy():
    r = pagezero.memcpy("128KB", chunk="32KB", cache="cold", loops=2)[0]
    assert r.details["cold_method"] in METHODS


# Threads ------------------------------------------------------------------------


@needs_2_cpus
@pytest.mark.parametrize("threads", sorted({2, min(CPUS, 4)}))
@pytest.mark.parametrize("cold", [False, True])
def test_threads_clear_exactly_their_parts(threads, cold):
    size = threads * (64 << 10) + (12 << 10)  # the last part is longer
    with _core.Region(size, guard=True) as r:
        view = memoryview(r)
        view[:] = b"\xff" * size
        events = _core.run_threads_on(r, FILL, threads, 16 << 10, 2, 0x10, 1, cold, "")
        data = bytes(view)
        view.release()
    part = size // threads // 4096 * 4096
    for t in range(threads):
        end = (t + 1) * part if t + 1 < threads else size
        assert data[t * part : end] == bytes([0x10 + t]) * (end - t * part), t
    # Every thread passed the barrier only once all had arrived.
    starts = [e for e in events if e[1] == "start"]
    assert sorted(e[0] for e in starts) == list(range(threads))
    assert all(e[3] == threads for e in starts)
    if cold:
        for t in range(threads):
            flushed = [e[2] for e in events if e[0] == t and e[1] == "flush"]
            assert min(flushed) == t * part


@needs_2_cpus
@pytest.mark.parametrize("mode", ["shared", "private"])
def test_memset_threads_result(mode):
    r = pagezero.memset("1MB", function=FILL, loops=3, threads=2, threads_mode=mode)[0]
    assert r.params["threads"] == 2 and r.params["threads_mode"] == mode
    assert r.bytes_per_loop == (1 << 20) * (2 if mode == "private" else 1)
    assert len(r.details["thread_samples"]) == 2
    assert sum(r.details["thread_bytes"]) == r.bytes_per_loop
    assert len(set(r.details["cpus"])) == 2
    assert len(thread_rates(r)) == 2
    mean, spread = thread_spread(r)
    assert mean > 0 and spread >= 0


@needs_2_cpus
def test_scaling_runs_each_thread_count(tmp_path):
    rs = scaling("1MB", function=FILL, max_threads=2, loops=2)
    assert [r.params.get("threads", 1) for r in rs] == [1, 2]
    from pagezero.figures import plot_scaling

    paths = plot_scaling(rs, str(tmp_path / "scaling"))
    assert all(os.path.getsize(p) > 0 for p in paths)


@pytest.mark.parametrize("threads", [0, -1, CPUS + 1, 1.5, True])
def test_bad_threads(threads):
    with pytest.raises(ValueError, match="threads"):
        pagezero.memset("1MB", threads=threads)


def test_bad_threads_mode_and_tiny_parts():
    with pytest.raises(ValueError, match="threads mode"):
        pagezero.memset("1MB", threads_mode="both")
    if CPUS >= 2:
        with pytest.raises(ValueError, match="at least 4KB"):
            pagezero.memset("4KB", threads=2)


def test_choose_cpus_distinct():
    cpus = choose_cpus(CPUS)
    assert len(set(cpus)) == CPUS and set(cpus) <= os.sched_getaffinity(0)


# NUMA ---------------------------------------------------------------------------


def test_bind_reads_back_node_0():
    with _core.Region(1 << 20, populate=False) as r:
        _core.numa_bind(r, 0)
        memoryview(r)[:] = b"\0" * (1 << 20)
        mode, first, node = _core.numa_policy(r)
    assert (mode, first, node) == (2, 0, 0)  # MPOL_BIND to node 0, page on node 0


def test_memset_on_node_0():
    r = pagezero.memset("1MB", function=FILL, loops=1, node=0, cpu_node=0)[0]
    assert r.params["node"] == 0 and r.params["cpu_node"] == 0


@pytest.mark.parametrize("arg", ["node", "cpu_node"])
def test_missing_node_refused(arg):
    missing = max(numa_nodes()) + 1
    with pytest.raises(ValueError, match=f"{arg} {missing} does not exist"):
        pagezero.memset("1MB", **{arg: missing})
    if numa_nodes() == [0]:
        with pytest.raises(ValueError, match="only node 0"):
            pagezero.memset("1MB", **{arg: missing})


# Counters -----------------------------------------------------------------------


def test_counters_with_fake_source(switch):
    switch(PAGEZERO_FAKE_COUNTERS="1")
    threads = 2 if CPUS >= 2 else 1
    r = pagezero.memset("1MB", function=FILL, loops=3, counters=True, threads=threads)[0]
    names = _core.counter_names()
    assert tuple(r.details["counters"]) == names
    for i, name in enumerate(names):
        # The fake counter i advances (i + 1) * 1000 per read, read twice a loop per thread.
        assert r.details["counters"][name] == ((i + 1) * 1000 * threads,) * 3
    assert "fake" in r.details["counters_source"]


def test_counters_without_pmu_fail_clearly(without_pmu):
    with pytest.raises(pagezero.UnavailableError, match="no PMU"):
        pagezero.memset("1MB", loops=1, counters=True)


# A failure names the step that failed ---------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failed_counter_read_is_not_called_an_open(switch, threads):
    # Read 1 is before loop 0, read 2 after it: the counters were open.
    if threads > CPUS:
        pytest.skip(f"needs {threads} CPUs")
    switch(PAGEZERO_FAKE_COUNTERS="1", PAGEZERO_FAIL_COUNTER_READ="2")
    with pytest.raises(pagezero.PagezeroError) as e:
        pagezero.memset("1MB", function=FILL, loops=3, counters=True, threads=threads)
    assert "reading the hardware counters failed" in str(e.value)
    assert "perf_event_open" not in str(e.value) and "Input/output error" in str(e.value)


def test_multiplexed_counters_are_refused_and_said_so(switch):
    switch(PAGEZERO_FAKE_COUNTERS="1", PAGEZERO_FAKE_MULTIPLEXED="1")
    with pytest.raises(pagezero.PagezeroError, match="multiplexed") as e:
        pagezero.memset("1MB", function=FILL, loops=2, counters=True)
    assert "perf_event_open" not in str(e.value)


def test_cli_failed_counter_read_exits_1_naming_the_read():
    env = dict(os.environ, PAGEZERO_FAKE_COUNTERS="1", PAGEZERO_FAIL_COUNTER_READ="2")
    p = run_python(
        "-m", "pagezero", "mem", "memset", "-s", "1MB", "-f", FILL, "--counters", env=env
    )
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("pagezero: error: reading the hardware counters failed")


def test_binding_to_a_missing_node_is_not_called_pinning():
    # Both are -EINVAL from the C core; pinned threads used to make every
    # -EINVAL a "could not pin the threads".
    cpu = min(os.sched_getaffinity(0))
    with pytest.raises(
        ValueError,
        match="could not bind the buffers to node 4000 "
        r"\(mbind: Invalid argument\)",
    ):
        _core.bench_mem("clear", FILL, 1 << 16, cpus=(cpu,), node=4000)


def test_pinning_to_a_forbidden_cpu_names_the_thread_and_cpu():
    allowed = os.sched_getaffinity(0)
    forbidden = max(allowed) + 1
    if forbidden >= 1024:
        pytest.skip("every CPU number is allowed to this process")
    cpus = (min(allowed), forbidden)
    with pytest.raises(
        ValueError,
        match=rf"could not pin thread 1 to CPU {forbidden} "
        r"\(sched_setaffinity",
    ):
        _core.bench_mem("clear", FILL, 1 << 16, threads=2, mode="private", cpus=cpus)


# Command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["-t", "0"],
        ["-t", "-2"],
        ["-t", str(CPUS + 1)],
        ["--node", "4096"],
        ["--cpu-node", "4096"],
        ["--cache", "lukewarm"],
        ["--threads-mode", "x"],
    ],
)
def test_cli_bad_input_exits_2(args):
    p = run_python("-m", "pagezero", "mem", "memset", "-s", "1MB", *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("pagezero: error:") and "Traceback" not in p.stderr


def test_cli_counters_without_pmu_exit_1(
    without_pmu,
):
    env = {k: v for k, v in os.environ.items() if k != "PAGEZERO_FAKE_COUNTERS"}
    p = run_python("-m", "pagezero", "mem", "memset", "-s", "1MB", "--counters", env=env)
    assert p.returncode == 1 and "no PMU" in p.stderr and "Traceback" not in p.stderr


def test_cli_cold_threads_counters(tmp_path):
    out = tmp_path / "r.json"
    threads = "2" if CPUS >= 2 else "1"
    env = dict(os.environ, PAGEZERO_FAKE_COUNTERS="1")
    p = run_python(
        "-m",
        "pagezero",
        "mem",
        "memset",
        "-s",
        "1MB",
        "-k",
        "64KB",
        "-l",
        "2",
        "-f",
        FILL,
        "--cache",
        "cold",
        "-t",
        threads,
        "--counters",
        "--node",
        "0",
        "-o",
        str(out),
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert "cache cold" in p.stdout and "cycles:" in p.stdout
    if threads == "2":
        assert "# per thread: " in p.stdout and " GB/s ( +- " in p.stdout
    r = pagezero.load_results(str(out))
    first = next(iter(r))
    assert first.params["cache"] == "cold" and first.details["counters"]


@needs_2_cpus
def test_cli_per_thread_line_is_the_mean_thread_rate_in_gb_per_s(tmp_path):
    # pagezero's own line, so GB/s of 10**9 bytes: the line's number, recomputed here from
    # the saved per-thread samples and parts (bytes over seconds, loops included).
    out = tmp_path / "t.json"
    p = run_python(
        "-m", "pagezero", "mem", "memset", "-s", "4MB", "-l", "3", "-f", FILL, "-t", "2",
        "-o", str(out),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    [line] = [x for x in p.stdout.splitlines() if x.startswith("# per thread: ")]
    assert line.endswith("% between threads )")
    printed, spread = float(line.split()[3]), float(line.split("+-")[1].split("%")[0])
    [r] = pagezero.load_results(str(out))
    rates = [
        part * len(s) / (sum(s) / 1e9)
        for part, s in zip(r.details["thread_bytes"], r.details["thread_samples"])
    ]
    mean = sum(rates) / len(rates)
    assert printed == pytest.approx(mean / 1e9, abs=0.005)
    sd = (sum((x - mean) ** 2 for x in rates) / (len(rates) - 1)) ** 0.5
    assert spread == pytest.approx(100 * sd / mean, abs=0.006)


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_cold_flushes_stay_outside_the_timed_spans(switch, benchmark):
    # Each flush made 20 ms longer ($PAGEZERO_FAKE_FLUSH_US, csrc/cache.c): a clock
    # started before the flush would put 20 ms or more in a sample of four chunks
    # whose clears take microseconds.
    switch(PAGEZERO_FAKE_FLUSH_US="20000")
    started = time.monotonic()
    r = getattr(pagezero, benchmark)(
        "64KB", chunk="16KB", loops=2, cache="cold", function="default"
    )[0]
    # Every chunk of every loop was flushed: each flush spins for 20 ms at least.
    assert time.monotonic() - started >= 2 * 4 * 0.020
    assert r.details["cold_method"] and len(r.samples) == 2
    assert all(s < 20_000_000 for s in r.samples), r.samples
