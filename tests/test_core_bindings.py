"""The _core bindings themselves: signatures, CPython's keyword parser, the
argument converters and the errors they raise (csrc/py/)."""

import inspect
import os

import pytest
from conftest import hugepage_shortage, run_python

import pagezero
from pagezero import _core

CLEAR = "default"
COPY = "default"


def public_functions():
    return sorted(
        name
        for name, obj in vars(_core).items()
        if not name.startswith("_") and inspect.isbuiltin(obj)
    )


@pytest.mark.parametrize("name", public_functions())
def test_every_function_has_a_signature(name):
    # The docstrings carry "name(args)\n--\n\n", which help() and inspect read.
    sig = inspect.signature(getattr(_core, name))
    assert isinstance(sig, inspect.Signature)


def test_region_has_a_signature():
    assert list(inspect.signature(_core.Region).parameters)[:2] == ["size", "page_shift"]


def test_keywords_name_every_argument():
    params = list(inspect.signature(_core.bench_mem).parameters)
    assert params[:3] == ["kind", "kernel", "size"]
    assert {"chunk", "loops", "offset", "cold", "threads", "cpus", "node", "counters"} <= set(
        params
    )
    raw = _core.bench_mem(
        kind="clear",
        kernel=CLEAR,
        size=8192,
        chunk=4096,
        page_shift=12,
        thp=0,
        loops=2,
        clock="ns",
        value=0,
    )
    assert len(raw["samples"]) == 2 and raw["loops_done"] == 2


def test_one_entry_answers_for_every_condition():
    # The plain run is the conditioned run with default conditions: same keys.
    plain = _core.bench_mem("clear", CLEAR, 1 << 16, loops=2)
    cold = _core.bench_mem(
        "clear", CLEAR, 1 << 16, loops=2, cold=True, evict_bytes=1 << 20, offset=16
    )
    assert (
        set(plain)
        == set(cold)
        == {
            "samples",
            "thread_samples",
            "thread_bytes",
            "counters",
            "cold_method",
            "loops_done",
            "interrupted",
            "huge_pages",
            "settle_loops",
            "settled",
        }
    )
    assert plain["interrupted"] is None and plain["counters"] is None
    assert (plain["settle_loops"], plain["settled"]) == (0, False)  # settle=0: none
    assert plain["thread_bytes"] == (1 << 16,)  # one thread: the whole size
    # Read from smaps only when THP was asked for (mem --thp).
    assert plain["huge_pages"] is None
    assert plain["cold_method"] == "" and cold["cold_method"] in (
        "clflushopt",
        "clflush",
        "dc-civac",
        "evict",
    )
    assert len(plain["thread_samples"]) == 1 and len(cold["thread_samples"][0]) == 2
    assert not hasattr(_core, "bench_threads")


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="'loop' is an invalid keyword argument"):
        _core.bench_mem("clear", CLEAR, 4096, chunk=4096, loop=1)


def test_duplicate_argument_is_a_type_error():
    with pytest.raises(TypeError, match=r"given by name \('size'\) and position"):
        _core.bench_mem("clear", CLEAR, 4096, size=4096)


def test_missing_argument_is_a_type_error():
    with pytest.raises(TypeError, match="missing required argument 'size'"):
        _core.bench_mem("clear", CLEAR)


def test_keyword_only_arguments_refuse_positions():
    with pytest.raises(TypeError, match="at most 3 positional"):
        _core.bench_mem("clear", CLEAR, 4096, 4096)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: _core.bench_mem("clear", CLEAR, 4096, loops=-1), "loops"),
        (lambda: _core.bench_mem("clear", CLEAR, 4096, page_shift=-1), "page_shift"),
        (lambda: _core.bench_mem("clear", CLEAR, 8192, threads=-1), "threads"),
        (lambda: _core.bench_fault("demand", 4096, 12, 0, 1, -1, 0, "ns", 0), "threads"),
        (lambda: _core.bench_fault("demand", 4096, 12, 0, 1, 1, -1, "ns", 0), "seed"),
        (lambda: _core.fault_pass("demand", 4096, 12, 0, 1 << 32), "seed"),
        (lambda: _core.bench_batch([bytearray(4096)], CLEAR, 1, -1), "loops"),
    ],
)
def test_negative_or_huge_ints_are_refused_not_wrapped(call, name):
    # The "I" format wrapped -1 to 4294967295 without a word.
    with pytest.raises(ValueError, match=rf"{name} must be .*, not (-1|4294967296)$"):
        call()


def test_a_non_integer_is_a_type_error():
    with pytest.raises(TypeError, match="loops must be an integer"):
        _core.bench_mem("clear", CLEAR, 4096, loops=1.5)


def test_copy_refuses_overlapping_buffers():
    b = bytearray(range(256)) * 64
    mv = memoryview(b)
    with pytest.raises(ValueError, match="overlap"):
        _core.copy(mv[0:8192], mv[4096:12288], COPY)
    before = bytes(b)
    _core.copy(mv[0:4096], mv[8192:12288], COPY)  # disjoint parts of one buffer are fine
    assert b[0:4096] == before[8192:12288]


@pytest.mark.parametrize("value, step", [(300, 0), (255, 1), (-5, 0)])
def test_run_threads_on_checks_every_threads_fill_value(value, step):
    # The C core refuses a byte outside 0..255 for any thread, with the generic message.
    with pagezero.region("64KB") as r, pytest.raises(ValueError, match="refused its arguments"):
        _core.run_threads_on(r, CLEAR, 2, 4096, 1, value, step, False, "")


def test_build_names_compiler_flags_and_test_switches():
    assert set(_core.BUILD) == {"compiler", "flags", "test_switches"}
    assert _core.BUILD["compiler"].split()[0] in ("gcc", "clang")
    assert "-O3" in _core.BUILD["flags"]
    # The suite imports the test build (helpers/core_build.py), its define among the flags.
    assert _core.BUILD["test_switches"] is True and "-DPZ_TEST_SWITCHES" in _core.BUILD["flags"]


CLEAR_PAGES = """
from pagezero import _core
print([r["name"] for r in _core.kernels() if r["clear_pages"]])
"""


def test_clear_pages_without_erms_is_rep_stosq():
    if _core.ARCH != "x86-64" or not {"erms", "rep_good"} <= set(_core.cpu_features()):
        pytest.skip("needs an x86-64 CPU with erms to hide, and Linux's rep_good")
    env = dict(os.environ, PAGEZERO_HIDE_FEATURES="erms")
    out = run_python("-c", CLEAR_PAGES, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['x86-64-stosq']"


@pytest.mark.owns_hugepage_pools
def test_hugepage_shortage_from_c_states_facts_without_advice():
    # Writing a number into nr_hugepages can shrink the pool: only
    # pagezero.system.hugepages, which knows the pool, words that advice.
    with pytest.raises(pagezero.MappingError) as info:
        _core.Region(hugepage_shortage("2MB"), 21)
    assert info.value.errno in (12, 22)
    assert "echo" not in str(info.value)
    # The C message states the pool's raw free count, read here from sysfs.
    with open("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages") as f:
        assert f"{int(f.read())} free" in str(info.value)
    assert "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages" in str(info.value)


def test_numa_bind_failure_is_a_mapping_error():
    # pagezero.measure.policy catches it as an OSError and rewords it.
    with pagezero.region("4KB") as r, pytest.raises(pagezero.MappingError):
        _core.numa_bind(r, 100000)
