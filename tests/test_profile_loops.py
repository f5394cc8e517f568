"""A fault run's profile loop by loop (csrc/fault.c, csrc/sample.c): bench_fault's raw
profile counts each completed loop's samples apart, every sample with its period, so that
the profile of a Result covers the loops its rate keeps (measure/fault.py, _without_warmup)
and a loop a stop signal cut short contributes nothing; each thread's CPU time per loop.

The real runs need perf sampling of the kernel (root, or perf_event_paranoid <= 1): they
skip with the reason where it is refused. The warm-up cut is checked on a synthetic raw
run, the C core and the summary replaced: which samples reach the summary, not the
kernel's symbols.
"""

import os
import signal
import threading
import time

import pytest

import pagezero
from pagezero import _core
from pagezero.interrupt import Interrupted, signals_interrupt
from pagezero.measure import fault
from pagezero.measure import profile as inside

MB = 1 << 20
TOTALS = ("user", "user_period", "other", "other_period", "lost")


@pytest.fixture(scope="module")
def can_sample():
    raw = _core.bench_fault("demand", 4 * MB, 12, _core.THP_OFF, 1, 1, 0, "ns", 0, profile=True)
    if "refused" in raw["profile"]:
        pytest.skip(
            f"perf events cannot sample here: {inside.refused_why(raw['profile']['refused'])}"
        )


def check_loops(prof, loops_done):
    """Each completed loop's counts, summing to the totals and to the kernel samples."""
    loops = prof["loops"]
    assert len(loops) == loops_done
    assert sum(loop["kernel"] for loop in loops) == len(prof["kernel_ips"])
    assert len(prof["kernel_periods"]) == len(prof["kernel_ips"])
    for key in TOTALS:
        assert sum(loop[key] for loop in loops) == prof[key], key
    # A period is the cycles or ns a sample stands for: never 0, at least 1 per sample.
    assert all(p > 0 for p in prof["kernel_periods"])
    assert prof["user_period"] >= prof["user"] and prof["other_period"] >= prof["other"]
    assert isinstance(prof["format_lost"], bool)


@pytest.mark.parametrize("threads", [1, 2])
def test_each_completed_loop_has_its_own_samples(can_sample, threads):
    raw = _core.bench_fault(
        "demand", 32 * MB, 12, _core.THP_OFF, 3, threads, 0, "ns", 0, profile=True
    )
    prof = raw["profile"]
    assert prof["event"] in ("cycles", "cpu-clock")
    check_loops(prof, raw["loops_done"])
    assert prof["kernel_ips"], "3 x 32MB of demand faults sampled no kernel address"


def test_each_thread_s_cpu_time_is_kept_per_loop():
    raw = _core.bench_fault("demand", 4 * MB, 12, _core.THP_OFF, 3, 2, 0, "ns", 0)
    assert raw["profile"] is None
    assert [len(t) for t in raw["thread_cpu"]] == [3, 3]
    assert all(ns > 0 for t in raw["thread_cpu"] for ns in t)


def test_a_refused_ring_says_mmap(switch):
    # 8 rings need at least 8 x 9 pages (8 data pages and the metadata page each).
    switch(PAGEZERO_FAKE_MLOCK_KB=str((8 * 9 - 1) * os.sysconf("SC_PAGESIZE") // 1024))
    raw = _core.bench_fault("demand", 4 * MB, 12, _core.THP_OFF, 1, 8, 0, "ns", 0, profile=True)
    prof = raw["profile"]
    if prof.get("stage") == "open":
        pytest.skip(f"perf events cannot sample here: {inside.refused_why(prof['refused'])}")
    assert prof == {"refused": 1, "stage": "mmap"}  # EPERM, as perf_mmap() refuses it


def test_eight_threads_share_the_locked_memory(can_sample, switch):
    # Enough for 8 rings of 32 data pages: halving from 256 pages each, the first ring
    # took it all and no other could map even 8, so the whole profile was refused.
    switch(PAGEZERO_FAKE_MLOCK_KB=str(8 * 33 * os.sysconf("SC_PAGESIZE") // 1024))
    raw = _core.bench_fault("demand", 4 * MB, 12, _core.THP_OFF, 2, 8, 0, "ns", 0, profile=True)
    check_loops(raw["profile"], 2)


def test_a_kernel_without_format_lost_counts_lost_records(can_sample, switch):
    switch(PAGEZERO_REFUSE_FORMAT_LOST="1")
    raw = _core.bench_fault("demand", 8 * MB, 12, _core.THP_OFF, 2, 1, 0, "ns", 0, profile=True)
    check_loops(raw["profile"], 2)
    assert raw["profile"]["format_lost"] is False


def test_a_loop_a_signal_cut_short_contributes_no_sample(
    can_sample, stop_signals_as_usual, monkeypatch
):
    seen = []

    def recorded(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    real = fault._core.bench_fault
    monkeypatch.setattr(fault._core, "bench_fault", recorded)
    start, cancelled = time.process_time(), threading.Event()

    def signal_after_some_work():  # as test_fault.py's: after 0.3 s of the run's CPU
        while time.process_time() - start < 0.3:
            if cancelled.wait(0.01):
                return
        os.kill(os.getpid(), signal.SIGTERM)

    timer = threading.Thread(target=signal_after_some_work)
    timer.start()
    try:
        with signals_interrupt(), pytest.raises(Interrupted):
            pagezero.faults("4MB", threads=2, loops=5000, profile=True)
    finally:
        cancelled.set()
        timer.join()
    [raw] = seen
    assert raw["interrupted"] == "SIGTERM" and 0 < raw["loops_done"] < 5000
    check_loops(raw["profile"], raw["loops_done"])
    assert [len(t) for t in raw["thread_cpu"]] == [raw["loops_done"]] * 2


# The warm-up cut, on a synthetic run -----------------------------------------------------

MS = 1_000_000
SLOW, FAST = 0xFFFF_FFFF_8100_0000, 0xFFFF_FFFF_8200_0000  # the slow loop's, the others'


def synthetic(workload, size, shift, thp, loops, threads, *rest, profile=False):
    """A 3-loop run whose first loop (20x slower: the host's first touch) has samples of its own."""
    counts = [
        {"kernel": 3, "user": 2, "user_period": 2 * MS, "other": 1, "other_period": MS, "lost": 1},
        {"kernel": 1, "user": 1, "user_period": MS, "other": 0, "other_period": 0, "lost": 0},
        {"kernel": 1, "user": 0, "user_period": 0, "other": 0, "other_period": 0, "lost": 2},
    ]
    prof = {
        "event": "cpu-clock",
        "kernel_ips": (SLOW, SLOW, SLOW, FAST, FAST),
        "kernel_periods": (MS,) * 5,
        "loops": tuple(counts),
        "format_lost": True,
        **{k: sum(c[k] for c in counts) for k in TOTALS},
    }
    wall = (2264 * MS, 116 * MS, 117 * MS)
    pages = {"rss": size, "anon_huge": 0, "hugetlb": 0, "kernel_page": 4096}
    return {
        "wall": wall,
        "threads": (wall,),
        "thread_cpu": ((2000 * MS, 110 * MS, 111 * MS),),
        "pages": (pages,) * 3,
        "latency": None,
        "loops_done": 3,
        "interrupted": None,
        "profile": prof if profile else None,
    }


def slow_share(raw):
    """A stand-in for profile.summarize: the share of the slow loop's address."""
    return {"clearing_share": raw["kernel_ips"].count(SLOW) / len(raw["kernel_ips"]), "raw": raw}


def test_the_warm_up_loops_samples_are_left_out_and_reported_apart(monkeypatch):
    monkeypatch.setattr(fault._core, "bench_fault", synthetic)
    monkeypatch.setattr(inside, "refusal", lambda: None)
    monkeypatch.setattr(inside, "summarize", slow_share)
    [r] = pagezero.faults("4MB", loops=3, profile=True)
    assert r.details["warmup"]["loops"] == 1
    kept = r.details["profile"]["raw"]
    assert kept["kernel_ips"] == (FAST, FAST) and kept["kernel_periods"] == (MS, MS)
    assert len(kept["loops"]) == 2
    assert (kept["user"], kept["user_period"], kept["other"], kept["lost"]) == (1, MS, 0, 2)
    assert r.details["profile"]["clearing_share"] == 0
    assert r.details["profile"]["all_loops"] == {"clearing_share": 3 / 5, "loops": 3}
    assert r.details["thread_cpu_ns"] == ((110 * MS, 111 * MS),)


def test_a_run_without_warm_up_loops_has_no_all_loops(monkeypatch):
    def warm(*args, **kwargs):
        return dict(synthetic(*args, **kwargs), wall=(117 * MS, 116 * MS, 117 * MS))

    monkeypatch.setattr(fault._core, "bench_fault", warm)
    monkeypatch.setattr(inside, "refusal", lambda: None)
    monkeypatch.setattr(inside, "summarize", slow_share)
    [r] = pagezero.faults("4MB", loops=3, profile=True)
    assert "warmup" not in r.details and "all_loops" not in r.details["profile"]
    assert r.details["profile"]["clearing_share"] == 3 / 5
