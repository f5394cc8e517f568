"""What a timed loop adds up, read through a clock that advances exactly one step per
reading ($PAGEZERO_FAKE_CLOCK_STEP_NS, csrc/clock.h).

A hot pass is one span: the clock read before the first chunk and after the last
(csrc/mem_bench.c hot_pass()). A cold pass is one span per chunk, summed, with each
flush outside them (cold_pass()): its sample is the number of chunks times the step,
the tail chunk included. The chunk counts below are worked out by hand from the sizes,
not by the C core's loop, so a pass that keeps only its last span, or drops the tail
chunk, or splits the threads' parts otherwise, reports a different number of steps.
"""

import os

import pytest

import pagezero

STEP = 1000  # ns per clock reading
KB = 1024


@pytest.fixture
def fake_clock(monkeypatch):
    monkeypatch.setenv("PAGEZERO_FAKE_CLOCK_STEP_NS", str(STEP))


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_a_cold_pass_sums_one_span_per_chunk(fake_clock, benchmark):
    # 64KB in 16KB chunks: four chunks, four spans, every loop.
    r = getattr(pagezero, benchmark)("64KB", chunk="16KB", loops=3, cache="cold")[0]
    assert r.samples == (4 * STEP,) * 3
    # The rate is the bytes over those summed spans: 3 x 64KB in 3 x 4 us.
    assert r.bytes_per_sec == pytest.approx(3 * 64 * KB / (3 * 4 * STEP / 1e9))


def test_a_cold_pass_times_the_tail_chunk_too(fake_clock):
    # 40KB in 16KB chunks: two whole chunks and an 8KB tail, three spans.
    r = pagezero.memset("40KB", chunk="16KB", loops=2, cache="cold")[0]
    assert r.samples == (3 * STEP,) * 2


def test_a_hot_pass_is_one_span_however_many_chunks(fake_clock):
    # Sixteen 4KB calls between two clock readings.
    r = pagezero.memset("64KB", chunk="4KB", loops=3)[0]
    assert r.samples == (STEP,) * 3


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs allowed to this process")
def test_a_shared_cold_region_splits_into_page_aligned_parts(fake_clock):
    # 100KB over two threads: half is 50KB, rounded down to whole 4KB pages is 48KB
    # (three 16KB chunks); the last thread takes the rest, 52KB (three chunks and a
    # 4KB tail). Each thread reads its own clock: its sum is its own chunks.
    r = pagezero.memset("100KB", chunk="16KB", loops=2, cache="cold", threads=2)[0]
    assert r.details["thread_samples"] == ((3 * STEP,) * 2, (4 * STEP,) * 2)
    assert r.samples == (4 * STEP,) * 2  # a cold sample is the slowest thread's sum


@pytest.mark.parametrize("value, misread", [("", 0), ("0", 0), ("-5", 2**64 - 5), ("12ns", 12)])
def test_a_step_that_is_not_a_positive_number_leaves_the_real_clock(monkeypatch, value, misread):
    # Misread, the switch would make every sample the same few steps: the real clock
    # never reads a 16MB clear as exactly that, three loops in a row.
    monkeypatch.setenv("PAGEZERO_FAKE_CLOCK_STEP_NS", value)
    r = pagezero.memset("16MB", loops=3)[0]
    assert r.samples != (misread,) * 3
