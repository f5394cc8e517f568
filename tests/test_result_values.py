"""Result as a value: its rates computed from known samples, its immutability,
and its files' round trip."""

import dataclasses
import json

import pytest
from conftest import has_tsc_clock

import pagezero

MB = 1 << 20


def small_result(**kw):
    kw.setdefault("function", "default")
    kw.setdefault("size", "1MB")
    kw.setdefault("loops", 2)
    return pagezero.memset(**kw)[0]


# The rates, from samples whose answer is known: a loop count dropped, a clock's
# rate ignored or a sum taken for a mean all change these numbers.
RATE_CASES = [
    # samples (ticks), clock, clock_hz, bytes/sec, cycles/byte; 1000 bytes a loop
    ((500, 1500), "ns", None, 2000 / 2000e-9, None),
    ((1000,), "timeval", None, 1000 / 1000e-9, None),
    ((300, 300, 600), "tsc", 3e9, 3000 / (1200 / 3e9), 1200 / 3000),
    ((4000, 2000), "cycles", None, None, 6000 / 2000),
]


@pytest.mark.parametrize("samples, clock, hz, bps, cpb", RATE_CASES)
def test_rates_are_total_bytes_over_total_time(samples, clock, hz, bps, cpb):
    r = pagezero.Result(
        benchmark="memset",
        function="generic",
        params={"size": 1000},
        bytes_per_loop=1000,
        clock=clock,
        samples=samples,
        clock_hz=hz,
    )
    assert r.total_bytes == 1000 * len(samples)
    assert r.bytes_per_sec == (None if bps is None else pytest.approx(bps))
    assert r.cycles_per_byte == (None if cpb is None else pytest.approx(cpb))


@pytest.mark.parametrize(
    "field, value",
    [
        ("samples", ()),
        ("function", "generic"),
        ("clock", "tsc"),
        ("params", {}),
        ("bytes_per_loop", 1),
    ],
)
def test_result_is_immutable(field, value):
    r = small_result()
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(r, field, value)


def test_result_contents_are_immutable():
    r = small_result()
    with pytest.raises(TypeError, match="does not support item assignment"):
        r.params["size"] = 1
    with pytest.raises(TypeError, match="does not support item assignment"):
        r.machine["cpu_model"] = "x"
    with pytest.raises(TypeError, match="does not support item assignment"):
        r.samples[0] = 1


def test_save_load_round_trip(tmp_path):
    memcpy = pagezero.memcpy(size="1MB", loops=2, function="default")[0]
    results = [small_result(), small_result(value="loop"), memcpy]
    path = tmp_path / "results.json"
    pagezero.save_results(str(path), results)
    assert pagezero.load_results(str(path)) == results
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary left


def test_save_load_round_trip_tsc(tmp_path):
    if not has_tsc_clock():
        pytest.skip("this CPU has no time-stamp counter")
    r = small_result(clock="tsc")
    pagezero.save_results(str(tmp_path / "r.json"), [r])
    [back] = pagezero.load_results(str(tmp_path / "r.json"))
    assert back == r
    assert back.cycles_per_byte == r.cycles_per_byte


def test_newer_schema_version_is_refused(tmp_path):
    path = tmp_path / "results.json"
    pagezero.save_results(str(path), [small_result()])
    doc = json.loads(path.read_text())
    doc["version"] += 1
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="newer"):
        pagezero.load_results(str(path))


@pytest.mark.parametrize(
    "text, words",
    [
        ("garbage", "not JSON"),
        ("", "not JSON"),
        ("[]", "not a pagezero results file"),
        ('{"schema": "something.else", "version": 1, "results": []}', "not a pagezero results"),
        (
            '{"schema": "pagezero.results", "version": 1, "results": [{"benchmark": "memset"}]}',
            "result 1: a result has no 'function'",
        ),
        (
            '{"schema": "pagezero.results", "version": "1", "results": []}',
            "schema version '1' is not one",
        ),
    ],
)
def test_garbage_is_refused(tmp_path, text, words):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^{path}: .*{words}"):
        pagezero.load_results(str(path))
