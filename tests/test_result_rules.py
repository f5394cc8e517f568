"""What a Result refuses, and how it words itself (pagezero/result.py): every message
pinned in full, the label of known parameters spelled out, and what to_dict() leaves
out. Results are built by hand here; nothing runs."""

import pytest

from pagezero.results.result import Result, signal_name


def make(**kw):
    fields = dict(
        benchmark="memset",
        function="k",
        params={"size": 4096, "loops": 2},
        bytes_per_loop=4096,
        clock="ns",
        samples=[10, 20],
    )
    return Result(**(fields | kw))


@pytest.mark.parametrize(
    "clock, hz, tick",
    [("ns", None, "1 ns"), ("timeval", None, "1 us"), ("tsc", 3e9, "a TSC tick"),
     ("cycles", None, "a cycle"), ("sundial", None, "its resolution")],
)  # fmt: skip
def test_a_loop_of_no_ticks_names_the_clocks_tick(clock, hz, tick):
    with pytest.raises(ValueError) as e:
        make(clock=clock, clock_hz=hz, samples=[3, 0, 0])
    assert str(e.value) == (
        f"2 of 3 loops of memset k took 0 ticks: shorter than one tick of the {clock} "
        f"clock ({tick}); clear more bytes per loop or use a finer clock (ns)"
    )


def test_a_thread_of_no_ticks_is_refused_though_the_loops_have_some():
    details = {"thread_samples": [[5, 6], [0, 0]]}
    with pytest.raises(ValueError) as e:
        make(clock="timeval", details=details)
    assert str(e.value) == (
        "a thread of memset k took 0 ticks in every loop: its part is shorter than one "
        "tick of the timeval clock (1 us); clear more bytes per thread"
    )
    # One loop of a thread at 0 ticks is a short loop, not an empty thread.
    assert make(details={"thread_samples": [[5, 6], [0, 1]]}).samples == (10, 20)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"samples": []}, "a Result needs at least one sample"),
        ({"samples": [1, -1]}, r"samples must be non-negative integers \(clock ticks\)"),
        ({"samples": [1, 2.0]}, r"samples must be non-negative integers \(clock ticks\)"),
        ({"samples": [True, 1]}, r"samples must be non-negative integers \(clock ticks\)"),
        ({"bytes_per_loop": 0}, "bytes_per_loop must be positive"),
        ({"bytes_per_loop": -4096}, "bytes_per_loop must be positive"),
        ({"clock": "tsc"}, "a tsc Result needs the measured clock_hz"),
        ({"clock": "tsc", "clock_hz": 0.0}, "a tsc Result needs the measured clock_hz"),
        ({"clock": "tsc", "clock_hz": -1e9}, "a tsc Result needs the measured clock_hz"),
        ({"clock": "sundial"}, "unknown clock 'sundial'"),
    ],
)
def test_what_a_result_refuses(kw, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        make(**kw)


def test_clock_rates():
    # ns and timeval tick at 1 GHz whatever is passed; tsc keeps its measured rate;
    # cycles have none.
    assert make(clock_hz=5.0).clock_hz == 1e9
    assert make(clock="timeval", clock_hz=5.0).clock_hz == 1e9
    tsc = make(clock="tsc", clock_hz=2e9, samples=[4000, 2000])
    assert tsc.seconds == (2e-6, 1e-6)
    assert tsc.unit == "bytes/sec"
    cycles = make(clock="cycles", samples=[8192, 4096])
    assert (cycles.clock_hz, cycles.seconds, cycles.rates) == (None, None, None)
    assert cycles.unit == "cycles/byte"
    assert cycles.values() == (2.0, 1.0)
    assert cycles.cycles_per_byte == 12288 / 8192
    assert make().cycles_per_byte is None
    assert make(samples=[4096, 2048]).values() == pytest.approx((1e9, 2e9))


def test_the_label_spells_sizes_and_names_a_cycles_clock():
    r = make(
        params={"size": 1 << 30, "chunk": 0, "page": "2MB", "loops": 9, "value": "loop",
                "thp": None, "threads": 2, "cold": True},
    )  # fmt: skip
    assert r.label() == ("memset k chunk=0 cold=true page=2MB size=1GB threads=2 value=loop")
    assert make(clock="cycles").label() == "memset k size=4KB clock=cycles"


def test_to_dict_leaves_out_what_is_not_set():
    d = make().to_dict()
    assert d == {
        "benchmark": "memset",
        "function": "k",
        "params": {"size": 4096, "loops": 2},
        "bytes_per_loop": 4096,
        "clock": "ns",
        "clock_hz": 1e9,
        "samples": [10, 20],
        "machine": {},
    }
    full = make(details={"cold_method": "clflush"}, interrupted="SIGINT").to_dict()
    assert (full["details"], full["interrupted"]) == ({"cold_method": "clflush"}, "SIGINT")


def test_from_dict_names_what_is_missing():
    d = make().to_dict()
    del d["clock"]
    with pytest.raises(ValueError, match="clock"):
        Result.from_dict(d)
    assert Result.from_dict(make(interrupted="SIGTERM").to_dict()).interrupted == "SIGTERM"
    assert Result.from_dict(make().to_dict() | {"interrupted": True}).interrupted == (
        "unknown signal"
    )


@pytest.mark.parametrize(
    "value, name",
    [(None, None), (False, None), ("", None), (True, "unknown signal"), ("SIGINT", "SIGINT")],
)
def test_signal_names(value, name):
    assert signal_name(value) == name


def test_a_thread_of_no_ticks_on_an_unknown_clock_says_its_resolution():
    with pytest.raises(ValueError) as e:
        make(clock="sundial", details={"thread_samples": [[0, 0], [1, 1]]})
    assert str(e.value).endswith(
        "shorter than one tick of the sundial clock (its resolution); clear more bytes per thread"
    )


def test_the_smallest_positive_values_are_accepted():
    assert make(bytes_per_loop=1).total_bytes == 2
    assert make(clock="tsc", clock_hz=0.5, samples=[1, 1]).seconds == (2.0, 2.0)


def test_stats_name_their_unit():
    assert make().stats()["unit"] == "bytes/sec"
    assert make(clock="cycles").stats()["unit"] == "cycles/byte"


def test_registered_benchmarks_name_themselves():
    from pagezero.measure.policy import BatchResult, FolioResult

    assert (BatchResult.BENCHMARK, FolioResult.BENCHMARK) == ("batch", "folio")


def test_a_subclass_reads_only_its_own_benchmark():
    from pagezero.measure.policy import BatchResult

    # Result.from_dict picks the class by benchmark; BatchResult.from_dict insists on
    # a batch's fields, which a memset has not.
    with pytest.raises(ValueError) as e:
        BatchResult.from_dict(make().to_dict())
    assert str(e.value) == "not a pagezero result: missing or bad 'memset'"


def test_a_registered_benchmarks_fields_must_be_an_object():
    d = make(benchmark="batch").to_dict() | {"batch": 5}
    with pytest.raises(ValueError) as e:
        Result.from_dict(d)
    assert str(e.value) == "not a pagezero result: missing or bad batch"


def test_a_result_without_a_machine_has_an_empty_one():
    d = make().to_dict()
    del d["machine"]
    assert dict(Result.from_dict(d).machine) == {}
