"""What makes two results one point: the unit (clock family) does, `loops`
does not, and a size is a size however it is spelled (pagezero/points.py)."""

import pytest

from pagezero.fleet.run import table_rows
from pagezero.results.points import params_key, point_key, summarize_points
from pagezero.results.resultset import Result, ResultSet

PARAMS = {"size": 4096, "page": "4KB", "chunk": 0, "value": 0}


def memset(clock="ns", samples=(1000, 1100, 1050), params=PARAMS, clock_hz=None):
    return Result(
        benchmark="memset",
        function="x86-64-stosb",
        params=dict(params),
        bytes_per_loop=params["size"] if isinstance(params["size"], int) else 4096,
        clock=clock,
        samples=samples,
        clock_hz=clock_hz,
    )


def batch(batch_value, loops=10):
    params = {
        "size": 64 << 20,
        "batch": batch_value,
        "batch_bytes": 32 << 20,
        "kernel": "x86-64-stosb",
        "loops": loops,
        "yield": False,
    }
    return Result(
        benchmark="batch-like",
        function="x86-64-stosb",
        params=params,
        bytes_per_loop=64 << 20,
        clock="ns",
        samples=[10**7] * 3,
    )


def test_cycles_and_ns_are_two_points():
    # `pagezero sweep memset -g clock=ns,cycles` makes such a set: cycles/byte
    # against bytes/sec must never pool into one row nor compare.
    ns, cycles = memset("ns"), memset("cycles", samples=(3000, 3100, 3050))
    assert point_key(ns) != point_key(cycles)
    rs = ResultSet([ns, cycles])
    assert len(rs.points()) == 2
    rows = rs.stats()
    assert sorted(r["unit"] for r in rows) == ["bytes/sec", "cycles/byte"]
    assert [r["n"] for r in rows] == [3, 3]
    assert len(summarize_points(rs)) == 2
    # The label says which, so tables keyed by label (store history) keep them apart.
    assert ns.label() != cycles.label() and "clock=cycles" in cycles.label()


def test_fleet_table_keeps_units_apart():
    rows = table_rows([("box", ResultSet([memset("ns"), memset("cycles")]))])
    assert sorted(r["unit"] for r in rows) == ["bytes/sec", "cycles/byte"]


def test_time_clocks_are_one_point():
    # ns and tsc both give bytes/sec of the same clear: one point.
    assert point_key(memset("ns")) == point_key(memset("tsc", clock_hz=2.4e9))


def test_loops_are_not_identity():
    ten = memset(params=dict(PARAMS, loops=10))
    twenty = memset(params=dict(PARAMS, loops=20))
    assert point_key(ten) == point_key(twenty)
    assert params_key(ten.params) == params_key(twenty.params)
    ((first, members),) = ResultSet([ten, twenty]).points()
    assert members == [ten, twenty]


@pytest.mark.parametrize("spelled", ["32MB", "32mb", " 32 MB", 33554432])
def test_sizes_are_read_as_bytes(spelled):
    a, b = batch(spelled), batch(33554432)
    assert point_key(a) == point_key(b)
    assert a.label() == b.label()
    assert "batch=32MB" in a.label()
    assert len(ResultSet([a, b]).points()) == 1


def test_size_strings_and_pages():
    a = memset(params=dict(PARAMS, size="4KB", page="4kb"))
    b = memset(params=dict(PARAMS, size=4096, page="4KB"))
    assert point_key(a) == point_key(b)


def test_a_preset_stays_a_name():
    # Not a size: kept as given, and not the same point as any size.
    assert point_key(batch("llc")) != point_key(batch(33554432))
    assert "batch=llc" in batch("llc").label()


def test_different_values_stay_different_points():
    assert point_key(batch("32MB")) != point_key(batch("16MB"))
    assert point_key(memset()) != point_key(memset(params=dict(PARAMS, value=1)))
