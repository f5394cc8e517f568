"""The Conditions value: checked once, recorded once, and the same Python
path for the plain run and the conditioned one (no hardware needed)."""

import dataclasses

import pytest

import pagezero
from pagezero import _core
from pagezero.measure import conditions
from pagezero.measure import mem as bench
from pagezero.measure.conditions import MAX_LOOPS, Conditions, check_loops


def test_defaults_are_perfs_conditions_and_record_nothing():
    c = Conditions.check()
    assert c == Conditions() and c.params() == {} and c.cpus() == ()


@pytest.mark.parametrize(
    "kwargs, params",
    [
        (dict(cache="cold"), {"cache": "cold"}),
        (dict(threads=2), {"threads": 2, "threads_mode": "shared"}),
        (dict(threads=2, threads_mode=None), {"threads": 2}),
        (dict(threads=2, threads_mode="private"), {"threads": 2, "threads_mode": "private"}),
        (dict(node=0), {"node": 0}),
        (dict(cpu_node=0), {"cpu_node": 0}),
        (dict(counters=True), {"counters": True}),
    ],
)
def test_params_keep_the_keys_results_always_had(kwargs, params, monkeypatch):
    monkeypatch.setattr(conditions.os, "sched_getaffinity", lambda pid: {0, 1})
    c = Conditions.check(**kwargs)
    assert c.params() == params


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(cache="warm"), "unknown cache state"),
        (dict(threads=0), "at least 1"),
        (dict(threads=True), "must be an int"),
        (dict(threads_mode="split"), "unknown threads mode"),
        (dict(node="0"), "node must be an int"),
        (dict(node=999), "node 999 does not exist"),
        (dict(counters=1), "counters must be True or False"),
    ],
)
def test_bad_conditions_are_one_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Conditions.check(**kwargs)


def test_conditions_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Conditions().cache = "cold"


def test_loop_limits_live_in_one_table():
    assert check_loops(MAX_LOOPS["batch"], "batch") == MAX_LOOPS["batch"]
    with pytest.raises(ValueError, match="between 1 and 100000"):
        check_loops(MAX_LOOPS["folio"] + 1, "folio")
    with pytest.raises(ValueError, match="between 1 and 10000000"):
        pagezero.memset(size="4KB", loops=MAX_LOOPS["memset"] + 1)
    with pytest.raises(ValueError, match="between 1 and 100000"):
        pagezero.batch(size="64KB", batch="16KB", loops=MAX_LOOPS["batch"] + 1)


def test_plan_carries_its_conditions():
    p = bench.plan("memset", size="64KB", cache="cold")
    assert p.conditions == Conditions(cache="cold")
    assert p.params()["cache"] == "cold" and "threads" not in p.params()


def fake_core(monkeypatch):
    """Record the C entry's calls, answering as it would."""
    calls = []

    def bench_mem(*args, **kwargs):
        calls.append((args, kwargs))
        loops = kwargs["loops"]
        return {
            "samples": (100,) * loops,
            "thread_samples": ((100,) * loops,),
            "thread_bytes": (args[2],),
            "cold_method": "clflush" if kwargs["cold"] else "",
            "counters": None,
            "loops_done": loops,
            "interrupted": None,
        }

    monkeypatch.setattr(_core, "bench_mem", bench_mem)
    return calls


def test_plain_and_conditioned_runs_share_one_c_entry(monkeypatch):
    calls = fake_core(monkeypatch)
    plain = pagezero.memset(size="64KB", function="generic", loops=2)[0]
    cold = pagezero.memset(size="64KB", function="generic", loops=2, cache="cold")[0]
    assert len(calls) == 2
    # Same arguments up to the conditions.
    (pa, pk), (ca, ck) = calls
    assert pa == ca
    differ = {k for k in pk if pk[k] != ck[k]}
    assert differ <= {"cold", "evict_bytes"} and "cold" in differ
    assert pk["cold"] is False and pk["threads"] == 1 and pk["node"] == -1
    assert pk["cpus"] == () and pk["counters"] is False
    assert ck["cold"] is True and ck["threads"] == 1
    assert plain.details == {} and plain.params.get("cache") is None
    assert cold.details["cold_method"] == "clflush" and cold.params["cache"] == "cold"
