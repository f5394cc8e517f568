"""Hot means settled: a point that stands for a hot buffer is timed once its own buffer's
rate has settled (memset's settle, csrc/mem_bench.c settle()). Read through the fake clock
(every pass one step: two passes always agree) and PAGEZERO_FAKE_UNSETTLED=N (the passes
before the Nth read as an unsettled rate), so no count here depends on this machine's speed.
"""

import pytest
from conftest import run_python

import pagezero
from pagezero.measure import mem
from pagezero.runs.sweeps import sweep_points
from pagezero.studies import cache as cache_study
from pagezero.studies.report import extents as extents_study

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30
STEP = 1000  # ns per clock reading


@pytest.fixture
def fake_clock(switch):
    switch(PAGEZERO_FAKE_CLOCK_STEP_NS=str(STEP))
    return switch


def test_a_steady_buffer_settles_after_the_minimum_and_is_timed_after(fake_clock):
    r = pagezero.memset("64KB", loops=3, settle=64)[0]
    assert r.details["settle_loops"] == mem.SETTLE_MIN_LOOPS and r.details["settled"] is True
    assert r.samples == (STEP,) * 3  # the untimed passes are not samples
    assert r.params["settle"] == 64


def test_an_unsettled_rate_is_waited_out(fake_clock):
    # Passes 0..11 read 2, 3, 2, ... steps; the 12th reads 1 (differs from the 11th's 3),
    # the 13th agrees with it: 14 untimed passes.
    fake_clock(PAGEZERO_FAKE_UNSETTLED="12")
    r = pagezero.memset("64KB", loops=3, settle=64)[0]
    assert (r.details["settle_loops"], r.details["settled"]) == (14, True)


def test_the_bound_ends_a_rate_that_never_settles_and_says_so(fake_clock):
    fake_clock(PAGEZERO_FAKE_UNSETTLED="1000")
    r = pagezero.memset("64KB", loops=3, settle=16)[0]
    assert (r.details["settle_loops"], r.details["settled"]) == (16, False)
    assert r.samples == (STEP,) * 3


def test_plain_memset_keeps_perfs_loops():
    r = pagezero.memset("64KB", loops=2)[0]
    assert "settle_loops" not in r.details and "settle" not in r.params


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(settle=1),
        dict(settle=-1),
        dict(settle=True),
        dict(settle="8"),
        dict(settle=8, cache="cold"),
        dict(settle=8, threads=2, size="8MB"),
    ],
)
def test_a_bad_settle_is_one_clear_error(kwargs):
    with pytest.raises(ValueError, match="settle"):
        mem.plan("memset", **{"size": "64KB", **kwargs})


def test_every_extent_point_settles_within_its_bound():
    points = cache_study.extent_points([4 * KB, 1 * MB, 64 * MB, 512 * MB, 2 * GB], ["generic"], {})
    for p in points:
        assert p["loops"] == cache_study.TIMED_LOOPS
        assert 2 <= p["settle"] <= cache_study.SETTLE_LOOPS
        assert p["settle"] == 2 or p["settle"] * p["size"] <= cache_study.SETTLE_BYTES
    assert [p["settle"] for p in points] == [64, 64, 16, 2, 2]


class Swept(Exception):
    pass


def _capture(seen):
    def fake_sweep_points(benchmark, points, runs, warmup, progress=None, notes=None):
        seen.append((points, warmup))
        raise Swept

    return fake_sweep_points


def test_the_cache_measurement_and_the_extents_study_time_settled_points(monkeypatch):
    seen = []
    monkeypatch.setattr(cache_study, "sweep_points", _capture(seen))
    info = {"caches": [], "memory": {"available_bytes": 64 * GB}}
    with pytest.raises(Swept):
        cache_study.measure_cache(info, runs=1, extents=[1 * MB, 2 * MB])
    cfg = {"extents": [4 * KB, 1 * MB], "runs": 1, "warmup": 1, "extend_extents": False}
    with pytest.raises(Swept):
        extents_study.study_extents(None, cfg, info, ["generic"], None)
    for points, warmup in seen:
        # A warm-up pass maps buffers of its own and warms nothing a point uses.
        assert warmup == 0 and all(p["settle"] >= 2 for p in points)


def test_the_report_line_names_the_extents_that_needed_more(fake_clock):
    fake_clock(PAGEZERO_FAKE_UNSETTLED="12")
    rs = sweep_points("memset", cache_study.extent_points([4 * KB, 64 * KB], ["generic"], {}), 1, 0)
    line = cache_study.settle_line(rs)
    assert "4KB 14, 64KB 14" in line and "the bound ended 0 of 2 points" in line


def test_mem_memset_settles_only_when_asked(fake_clock):
    fake_clock(PAGEZERO_FAKE_UNSETTLED="12")
    asked = run_python("-m", "pagezero", "mem", "memset", "-s", "64KB", "-l", "2", "--settle", "32")
    assert asked.returncode == 0, asked.stderr
    assert "# settle: 14 untimed loops before timing (the last two agreed)" in asked.stdout
    plain = run_python("-m", "pagezero", "mem", "memset", "-s", "64KB", "-l", "2")
    assert plain.returncode == 0 and "settle" not in plain.stdout
    bad = run_python("-m", "pagezero", "mem", "memset", "-s", "64KB", "--settle", "1")
    assert bad.returncode == 2 and bad.stderr.startswith("pagezero: error: settle must be")
    assert "Traceback" not in bad.stderr
