"""Fault runs warm first: a freshly reserved pool is faulted in once, untimed, before the
timed loops, and leading loops far slower than the rest are left out of the rate, said so.

The C core's bench_fault is replaced by a recorder that answers with the loops of the
issue's run on a Zen 4 VM (`mem mmap -s 1GB -p 2MB -f demand -l 5 --reserve`: 2264, 116,
117, 117, 118 ms), and the pool is conftest's fake sysfs: what is checked is which calls
are made and what the Result and the command line make of the loops, not any timing.
"""

import pytest
from conftest import check_rate_line, ok

import pagezero
from pagezero.measure import fault
from pagezero.measure import mem as warmup
from pagezero.studies.predict import study as predict_study

MS = 1_000_000
ISSUE_LOOPS = (2264 * MS, 116 * MS, 117 * MS, 117 * MS, 118 * MS)
MB = 1 << 20


@pytest.fixture
def bench(monkeypatch):
    """Replace _core.bench_fault; returns the list of its calls' (workload, loops) and the
    loops it answers with (settable)."""

    class Recorder:
        def __init__(self):
            self.calls = []
            self.wall = ISSUE_LOOPS

        def __call__(self, workload, size, shift, thp, loops, threads, *rest, profile=False):
            self.calls.append((workload, loops))
            wall = self.wall[:loops]
            pages = {"rss": 0, "anon_huge": 0, "hugetlb": size * threads, "kernel_page": 2 * MB}
            return {
                "wall": wall,
                "threads": (wall,) * threads,
                "pages": (pages,) * len(wall),
                "latency": None,
                "loops_done": len(wall),
                "interrupted": None,
                "profile": None,
            }

    recorder = Recorder()
    monkeypatch.setattr(fault._core, "bench_fault", recorder)
    return recorder


def test_a_freshly_reserved_pool_is_warmed_before_the_timed_loops(fake, bench):
    fake.set(total=0, free=0)
    [r] = pagezero.faults("4MB", page="2MB", loops=5, reserve=True)
    assert bench.calls == [("demand", 1), ("demand", 5)]  # the warm pass first, then the run
    assert r.details["pool_warmed"] is True
    assert fake.get("total") == 0  # given back


def test_a_pool_with_free_pages_is_not_warmed(fake, bench):
    fake.set(total=2, free=2)
    [r] = pagezero.faults("4MB", page="2MB", loops=5, reserve=True)
    assert bench.calls == [("demand", 5)]
    assert "pool_warmed" not in r.details


def test_a_leading_loop_far_slower_than_the_rest_is_left_out_of_the_rate(fake, bench):
    fake.set(total=2, free=2)
    [r] = pagezero.faults("4MB", page="2MB", loops=5)
    assert r.samples == ISSUE_LOOPS[1:]
    assert r.details["thread_samples"] == (ISSUE_LOOPS[1:],)
    assert len(r.details["pages"]) == 4
    assert r.details["warmup"]["loops"] == 1
    assert r.details["warmup"]["samples"] == ISSUE_LOOPS[:1]
    # The rate of the four warm loops, not the mean the first one drags to a fifth of it.
    assert r.bytes_per_sec == pytest.approx(4 * 4 * MB / (468 * MS / 1e9))


def test_loops_of_a_warm_machine_are_all_kept(fake, bench):
    fake.set(total=2, free=2)
    bench.wall = (200 * MS, 116 * MS, 117 * MS)  # 1.7x: a loaded machine, not the host
    [r] = pagezero.faults("4MB", page="2MB", loops=3)
    assert r.samples == bench.wall and "warmup" not in r.details


def test_the_command_line_says_which_loops_the_rate_used(fake, bench):
    from helpers.cli import run_cli

    fake.set(total=0, free=0)
    proc = run_cli("mem", "mmap", "-s", "4MB", "-p", "2MB", "-f", "demand", "-l", "5", "--reserve")
    lines = ok(proc).splitlines()
    rate = next(line for line in lines if "GB/sec" in line or "MB/sec" in line)
    check_rate_line(rate)
    # The four warm loops' 16MB in 468 ms, in perf's MB/sec (2^20).
    assert rate.split()[1] == "MB/sec" and float(rate.split()[0]) == pytest.approx(16 / 0.468)
    assert any(line.startswith("# warm-up: the freshly reserved hugepages") for line in lines)
    [loops] = [line for line in lines if line.startswith("# loops:")]
    assert loops.startswith("# loops: the rate counts 4 of 5; loop 1 left out as warming up")


def test_predict_applies_the_same_rule_to_its_runs():
    assert predict_study.warming_runs is warmup.warming_runs
    assert warmup.warming_runs([1.9, 10.8, 10.7]) == 1
    # Loops are held to a quarter of the rest's rate, runs to a half.
    assert warmup.warming_runs([3.0, 10.8, 10.7], warmup.WARM_LOOP_FRACTION) == 0
