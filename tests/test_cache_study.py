"""The extents' extension (pagezero.studies.cache.extend) with the sweeps faked by rates
shaped like an Intel Xeon VM's, and `pagezero info --measure` end to end (structure only:
no CPU is assumed)."""

import json
import sys

import pytest
from helpers.children import run

from pagezero.results.resultset import Result, ResultSet
from pagezero.studies import cache as cache_study

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


def intel(e):
    return 29e9 if e <= 64 * MB else 10.7e9


def _rs(points):
    results = [
        Result(
            benchmark="memset",
            function=p["function"],
            params={"size": p["size"], "chunk": p["chunk"], "loops": 2},
            bytes_per_loop=p["size"],
            clock="ns",
            samples=(int(1e9 * p["size"] / intel(p["chunk"] or p["size"])),) * 2,
        )
        for p in points
    ]
    return ResultSet(results, [{"process": 0}] * len(results))


def test_the_extents_are_extended_to_the_plateau_and_twice_the_cache(monkeypatch):
    swept = []

    def fake_sweep_points(benchmark, points, runs, warmup, progress=None, notes=None):
        swept.append(sorted({p["size"] for p in points}))
        return _rs(points)

    monkeypatch.setattr(cache_study, "sweep_points", fake_sweep_points)
    kernel = cache_study.temporal_kernels()[0]  # every CPU has a temporal one (generic)
    start = [16 * MB, 32 * MB, 64 * MB, 128 * MB]  # the fall's last extent alone: no plateau
    rs = _rs([{"function": kernel, "size": e, "chunk": 0} for e in start])
    info = {"caches": [], "memory": {"available_bytes": 64 * GB}}
    rs = cache_study.extend(rs, [kernel], info, runs=1)
    assert swept == [[256 * MB]]  # one doubling: 128MB and 256MB make the plateau
    cache = cache_study.cache_of(cache_study.rates_of(rs, [kernel]), info)
    assert (cache.cache_bytes, cache.plateau_bytes) == (64 * MB, 128 * MB)


def test_no_extension_without_the_memory_for_it(monkeypatch):
    monkeypatch.setattr(cache_study, "sweep_points", pytest.fail)
    kernel = cache_study.temporal_kernels()[0]
    rs = _rs([{"function": kernel, "size": e, "chunk": 0} for e in (32 * MB, 64 * MB, 128 * MB)])
    info = {"caches": [], "memory": {"available_bytes": 512 * MB}}  # a quarter: 128MB
    assert cache_study.extend(rs, [kernel], info, runs=1) is rs


def test_info_measure_reports_the_cache_beside_sysfs(tmp_path):
    cmd = [sys.executable, "-m", "pagezero", "info", "--measure", "--format", "json"]
    # Run away from the checkout: `python -m` would import its pagezero/, not the installed one.
    proc = run(cmd, 600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)["measured_cache"]
    assert {"cache_bytes", "plateau_bytes", "llc_bytes", "llc_source", "source"} <= set(measured)
    assert measured["source"] in ("measured", "sysfs", "unknown")
    if measured["cache_bytes"] is not None:
        assert measured["cache_bytes"] < measured["plateau_bytes"]
        assert measured["plateau_bytes"] in measured["extents"]
