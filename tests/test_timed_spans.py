"""What a timed loop adds up, read through a clock that advances exactly one step per
reading (the test switch PAGEZERO_FAKE_CLOCK_STEP_NS, csrc/clock.h).

A hot pass is one span: the clock read before the first chunk and after the last
(csrc/mem_bench.c hot_pass()). A cold pass is one span per chunk, summed, with each
flush outside them (cold_pass()): its sample is the number of chunks times the step,
the tail chunk included. The chunk counts below are worked out by hand from the sizes,
not by the C core's loop, so a pass that keeps only its last span, or drops the tail
chunk, or splits the threads' parts otherwise, reports a different number of steps.
"""

import glob
import json
import os

import pytest
from conftest import run_python
from helpers import core_build

import pagezero
from pagezero import _core

STEP = 1000  # ns per clock reading
KB = 1024


@pytest.fixture
def fake_clock(switch):
    switch(PAGEZERO_FAKE_CLOCK_STEP_NS=str(STEP))


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
def test_a_step_that_is_not_a_positive_number_leaves_the_real_clock(switch, value, misread):
    # Misread, the switch would make every sample the same few steps: the real clock
    # never reads a 16MB clear as exactly that, three loops in a row.
    switch(PAGEZERO_FAKE_CLOCK_STEP_NS=value)
    r = pagezero.memset("16MB", loops=3)[0]
    assert r.samples != (misread,) * 3
    assert _core.switches() == {} and "test_switches" not in r.machine


# Which build reads the switches, and what its results say ------------------------

MEASURE_AND_SAVE = """
import sys
import pagezero
r = pagezero.memset("64MB", loops=3)[0]
pagezero.save_results(sys.argv[1], [r])
print(pagezero._core.__file__)
"""


def saved(path):
    doc = json.loads(path.read_text())
    # A result whose machine is the file's inherits it (ResultSet.save).
    return doc, [doc["machine"], *(r.get("machine", doc["machine"]) for r in doc["results"])]


def release_core():
    """The core the package under test was installed with (the suite imports another)."""
    found = glob.glob(os.path.join(core_build.SOURCE, "_core*.so"))
    if not found:
        pytest.skip(f"{core_build.SOURCE} has no release core of its own (pip install -e .)")
    return found[0]


def test_a_release_core_holds_no_switch():
    with open(release_core(), "rb") as f:
        assert b"PAGEZERO_" not in f.read()


def test_a_release_build_ignores_a_fake_clock(tmp_path):
    # The package under test with its own core, as a user has it installed: no switch
    # compiled in, so the environment asks for a fake clock in vain.
    release_core()
    env = core_build.release_env(dict(os.environ, PAGEZERO_FAKE_CLOCK_STEP_NS="1"))
    p = run_python("-c", MEASURE_AND_SAVE, tmp_path / "r.json", env=env)
    assert p.returncode == 0, p.stderr
    assert not p.stdout.startswith(core_build.MIRROR)
    doc, machines = saved(tmp_path / "r.json")
    assert doc["build"]["test_switches"] is False
    assert all("test_switches" not in m for m in machines)
    # 64MB at one nanosecond a loop would be 6.7e16 bytes/sec; memory clears at GB/s.
    rate = doc["results"][0]["bytes_per_loop"] / (min(doc["results"][0]["samples"]) / 1e9)
    assert 1e8 < rate < 1e13


def test_a_test_build_records_the_switches_in_effect(tmp_path):
    env = dict(os.environ, PAGEZERO_FAKE_CLOCK_STEP_NS="1")
    p = run_python("-c", MEASURE_AND_SAVE, tmp_path / "r.json", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(core_build.MIRROR)
    doc, machines = saved(tmp_path / "r.json")
    assert doc["build"]["test_switches"] is True
    assert all(m["test_switches"] == {"PAGEZERO_FAKE_CLOCK_STEP_NS": "1"} for m in machines)
    assert doc["results"][0]["samples"] == [1, 1, 1]  # one span of one step a loop


def test_the_switches_are_read_at_import_not_while_measuring(monkeypatch, switch):
    # Set behind the core's back (no _read_switches()): this process's core still
    # measures with the real clock, and its results say nothing was faked.
    monkeypatch.setenv("PAGEZERO_FAKE_CLOCK_STEP_NS", str(STEP))
    r = pagezero.memset("64KB", chunk="16KB", loops=3, cache="cold")[0]
    assert r.samples != (4 * STEP,) * 3 and "test_switches" not in r.machine
    switch()  # read now
    r = pagezero.memset("64KB", chunk="16KB", loops=3, cache="cold")[0]
    assert r.samples == (4 * STEP,) * 3
    assert r.machine["test_switches"] == {"PAGEZERO_FAKE_CLOCK_STEP_NS": str(STEP)}
