"""The Python API: pagezero.memset / memcpy and their Results, the direct
kernel calls (clear, fill, copy) on every kind of buffer, and the errors.

No assertion is made on how fast anything is: rates are checked against the
samples they come from, buffers against the bytes they must hold.
"""

import errno
import gc
import os

import pytest
from conftest import (
    has_pool,
    has_tsc_clock,
    hugepage_shortage,
    kernel_names,
    mem_available,
    require_hugepages,
    require_kernel,
    run_python,
)
from helpers.cpus import CPUS, NEEDS_2_CPUS

import pagezero

MB = 1 << 20


# Helpers ----------------------------------------------------------------


def skip_unless_too_large(size):
    if pagezero.parse_size(size) <= mem_available():
        pytest.skip(f"{size} fits in this machine's memory")


def mappings():
    """(number of mappings, bytes mapped) from /proc/self/maps. Leaked
    neighbours with the same flags merge into one line, so count bytes too."""
    lines = 0
    mapped = 0
    with open("/proc/self/maps") as f:
        for line in f:
            start, end = line.split()[0].split("-")
            lines += 1
            mapped += int(end, 16) - int(start, 16)
    return lines, mapped


def zero_only_kernel():
    names = kernel_names("clear", zero_only=True)
    if not names:
        pytest.skip("no zero-only clear kernel on this architecture")
    return pagezero.find_kernel(names[0])


def run(benchmark, **kw):
    """The Result of one run (runs=1) of pagezero.memset or memcpy."""
    kw.setdefault("size", "1MB")
    kw.setdefault("loops", 2)
    return getattr(pagezero, benchmark)(**kw)[0]


def small_result(**kw):
    kw.setdefault("function", "default")
    return run("memset", **kw)


# memset / memcpy ----------------------------------------------------------


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
@pytest.mark.parametrize("loops", [1, 3])
def test_result_has_one_sample_per_loop(benchmark, loops):
    r = run(benchmark, loops=loops)
    assert r.benchmark == benchmark
    assert len(r.samples) == loops == r.loops
    assert r.bytes_per_loop == MB
    assert r.bytes_per_sec == pytest.approx(loops * MB / (sum(r.samples) / 1e9))
    assert r.params["size"] == MB
    assert r.params["page"] == "4KB"
    assert r.params["chunk"] == 0
    assert r.params["loops"] == loops


@pytest.mark.parametrize("size", [MB, "1MB", "1mb", "1024KB", "1048576B", " 1 Mb "])
def test_size_is_parsed_to_bytes(size):
    assert small_result(size=size).params["size"] == MB


@pytest.mark.parametrize("kind, benchmark", [("clear", "memset"), ("copy", "memcpy")])
def test_every_available_kernel_runs(kind, benchmark):
    for k in pagezero.kernels(kind):
        if k.available:
            r = run(benchmark, function=k.name, size="64KB", loops=1)
            assert r.function == k.name
            assert r.bytes_per_sec == pytest.approx((64 << 10) / (r.samples[0] / 1e9))


def test_a_run_rate_counts_every_loop():
    # A real run: its rate is its bytes times its loops over the sum of its samples.
    r = run("memset", function="default", loops=3)
    assert r.bytes_per_sec == pytest.approx(3 * MB / (sum(r.samples) / 1e9))


@pytest.mark.parametrize("clock", ["ns", "timeval"])
def test_time_clocks(clock):
    r = small_result(size="16MB", clock=clock)
    assert r.clock == clock
    assert r.clock_hz == 1e9
    assert r.bytes_per_sec == pytest.approx(2 * 16 * MB / (sum(r.samples) / 1e9))
    if clock == "timeval":  # microseconds, recorded as nanoseconds
        assert all(s % 1000 == 0 for s in r.samples)
    assert r.cycles_per_byte is None


def test_tsc_clock():
    if not has_tsc_clock():
        pytest.skip("this CPU has no time-stamp counter")
    r = small_result(clock="tsc")
    assert r.clock == "tsc"
    assert r.clock_hz > 0
    assert r.cycles_per_byte == pytest.approx(sum(r.samples) / (2 * MB))
    assert r.bytes_per_sec == pytest.approx(2 * MB / (sum(r.samples) / r.clock_hz))


def test_cycles_clock_without_a_pmu_names_tsc(without_pmu):
    with pytest.raises(pagezero.UnavailableError, match="tsc"):
        small_result(clock="cycles")


def test_cycles_clock_with_a_pmu(with_pmu):
    r = small_result(clock="cycles")
    assert r.cycles_per_byte == pytest.approx(sum(r.samples) / (2 * MB))
    assert r.bytes_per_sec is None


@pytest.mark.parametrize("value", [0, 7, 255, "loop"])
def test_fill_values_are_recorded(value):
    r = small_result(value=value)
    assert r.params["value"] == value


@pytest.mark.parametrize(
    "chunk, chunk_bytes",
    [
        (0, 0),
        ("64KB", 64 << 10),  # divides the size
        (3000, 3000),  # does not: the last call is shorter
        ("1MB", MB),  # the whole extent, spelled out
    ],
)
@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_chunks(benchmark, chunk, chunk_bytes):
    r = run(benchmark, chunk=chunk)
    assert r.params["chunk"] == chunk_bytes
    assert r.bytes_per_loop == MB  # chunks split a loop, they do not shorten it


def test_zero_only_kernel_runs_with_zero():
    k = require_kernel(zero_only_kernel().name)
    r = small_result(function=k.name, value=0)
    assert r.function == k.name and r.loops == 2


def test_2mb_hugepages_when_reserved():
    require_hugepages("2MB")
    r = small_result(size="2MB", page="2MB")
    assert r.params["page"] == "2MB"
    assert r.bytes_per_loop == 2 * MB and r.loops == 2


# Bad input: ValueError --------------------------------------------------------

# Each bad input, and what the message must name: the option and the value at fault.
BAD_MEMSET = {
    "size 0": (dict(size=0), r"invalid size 0: must be at least 1 byte"),
    "size '0'": (dict(size="0"), r"invalid size '0'"),
    "size -1": (dict(size=-1), r"invalid size -1: must not be negative"),
    "size '-1'": (dict(size="-1"), r"invalid size '-1'"),
    "size garbage": (dict(size="abc"), r"invalid size 'abc'"),
    "size unknown unit": (dict(size="12XB"), r"invalid size '12XB': unknown unit 'XB'"),
    "size fraction": (dict(size="1.5GB"), r"invalid size '1\.5GB'"),
    "size float": (dict(size=1.5), r"size must be an int .*not 1\.5"),
    "size None": (dict(size=None), r"size must be an int .*not None"),
    "size overflowing": (dict(size="99999999TB"), r"invalid size '99999999TB': too large"),
    "size overflowing int": (dict(size=1 << 64), r"invalid size 18446744073709551616: too large"),
    "page 3KB": (dict(page="3KB"), r"invalid page size '3KB'"),
    "page garbage": (dict(page="huge"), r"invalid page size 'huge'"),
    "chunk larger than size": (dict(chunk="2MB"), r"invalid chunk '2MB': larger than the size"),
    "chunk negative": (dict(chunk=-1), r"invalid chunk -1"),
    "chunk garbage": (dict(chunk="abc"), r"invalid chunk 'abc'"),
    "unknown function": (dict(function="nope"), r"unknown clear kernel 'nope'"),
    "copy kernel name": (dict(function="x86-64-movsb"), r"unknown clear kernel 'x86-64-movsb'"),
    "unknown clock": (dict(clock="nope"), r"unknown clock 'nope'"),
    "loops 0": (dict(loops=0), r"loops must be between 1 and \d+, not 0"),
    "loops -3": (dict(loops=-3), r"loops must be between 1 and \d+, not -3"),
    "loops 'x'": (dict(loops="x"), r"loops must be an int, not 'x'"),
    "loops '2'": (dict(loops="2"), r"loops must be an int, not '2'"),
    "loops float": (dict(loops=2.0), r"loops must be an int, not 2\.0"),
    "value 256": (dict(value=256), r"fill value must be .*, not 256"),
    "value -1": (dict(value=-1), r"fill value must be .*, not -1"),
    "value 'abc'": (dict(value="abc"), r"fill value must be .*, not 'abc'"),
    "value '7'": (dict(value="7"), r"fill value must be .*, not '7'"),
    "thp on hugepages": (dict(page="2MB", size="2MB", thp=True), r"thp=True applies to 4KB"),
    "thp garbage": (dict(thp="yes"), r"thp must be .*, not 'yes'"),
}

BAD_MEMCPY = {
    "size 0": (dict(size=0), r"invalid size 0"),
    "size garbage": (dict(size="abc"), r"invalid size 'abc'"),
    "page 3KB": (dict(page="3KB"), r"invalid page size '3KB'"),
    "chunk larger than size": (dict(chunk="2MB"), r"invalid chunk '2MB': larger than the size"),
    "unknown function": (dict(function="nope"), r"unknown copy kernel 'nope'"),
    "clear kernel name": (dict(function="x86-64-stosb"), r"unknown copy kernel 'x86-64-stosb'"),
    "unknown clock": (dict(clock="nope"), r"unknown clock 'nope'"),
    "loops 0": (dict(loops=0), r"loops must be between 1 and \d+, not 0"),
}


@pytest.mark.parametrize("kw, words", BAD_MEMSET.values(), ids=BAD_MEMSET.keys())
def test_bad_memset_input_raises_value_error(kw, words):
    with pytest.raises(ValueError, match=words):
        run("memset", **kw)


@pytest.mark.parametrize("kw, words", BAD_MEMCPY.values(), ids=BAD_MEMCPY.keys())
def test_bad_memcpy_input_raises_value_error(kw, words):
    with pytest.raises(ValueError, match=words):
        run("memcpy", **kw)


@pytest.mark.parametrize("value", [7, "loop"])
def test_zero_only_kernel_refuses_a_nonzero_value(value):
    k = zero_only_kernel()
    with pytest.raises(ValueError, match="zero"):
        small_result(function=k.name, value=value)


# Environment failures ---------------------------------------------------------


UNAVAILABLE = """
import pagezero
missing = [(kind, k) for kind in ("clear", "copy") for k in pagezero.kernels(kind)
           if not k.available]
assert missing, "hiding features left every kernel available"
for kind, k in missing:
    run = pagezero.memset if kind == "clear" else pagezero.memcpy
    try:
        run(size="1MB", loops=1, function=k.name)
    except pagezero.UnavailableError as e:
        assert k.reason in str(e), (e, k.reason)
    else:
        raise AssertionError(k.name + " ran")
print(len(missing))
"""


def test_unavailable_kernels_raise_and_never_run():
    # Hide every feature pagezero knows, so kernels become unavailable on any CPU.
    env = dict(
        os.environ,
        PAGEZERO_HIDE_FEATURES="sse2,avx,avx2,avx512f,avx512bw,erms,fsrm,clzero,mops,dczva",
    )
    proc = run_python("-c", UNAVAILABLE, env=env)
    assert proc.returncode == 0, proc.stderr
    if pagezero._core.ARCH == "x86-64":
        assert int(proc.stdout) >= 8
    if pagezero._core.ARCH == "arm64":
        assert int(proc.stdout) == 3  # arm64-dc-zva, arm64-mops, arm64-mops-nt


def test_1gb_hugepages_when_reserved():
    require_hugepages("1GB")
    r = pagezero.memset(size="1GB", page="1GB", loops=1)[0]
    assert r.params["page"] == "1GB" and r.bytes_per_loop == 1 << 30


@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
@pytest.mark.parametrize("page", ["2MB", "1GB"])
def test_hugepage_shortage_raises_mapping_error(benchmark, page):
    size = hugepage_shortage(page, buffers=2 if benchmark == "memcpy" else 1)
    with pytest.raises(pagezero.MappingError) as info:
        run(benchmark, size=size, page=page)
    e = info.value
    assert isinstance(e, OSError)
    assert e.errno in (errno.ENOMEM, errno.EINVAL)
    assert "hugepages" in str(e) and "nr_hugepages" in str(e)


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_too_large_raises_mapping_error(benchmark):
    skip_unless_too_large("64TB")
    with pytest.raises(pagezero.MappingError) as info:
        run(benchmark, size="64TB")
    assert info.value.errno == errno.ENOMEM
    assert "too large" in str(info.value)


def test_too_large_region_raises_mapping_error():
    skip_unless_too_large("64TB")
    with pytest.raises(pagezero.MappingError, match="too large"):
        pagezero.region("64TB")


def _failing_calls():
    """Calls that must each fail without leaving a mapping behind."""
    calls = []
    if mem_available() < pagezero.parse_size("64TB"):
        calls += [
            lambda: pagezero.memset(size="64TB", function="default", loops=1),
            lambda: pagezero.memcpy(size="64TB", function="default", loops=1),
            lambda: pagezero.region("64TB"),
        ]
    for page in [p for p in ("2MB", "1GB") if has_pool(p)]:
        calls += [
            lambda page=page: pagezero.memset(size=hugepage_shortage(page), page=page, loops=1),
            lambda page=page: pagezero.memcpy(size=hugepage_shortage(page, 2), page=page, loops=1),
            lambda page=page: pagezero.region(hugepage_shortage(page), page=page),
        ]
    return calls


@pytest.mark.owns_hugepage_pools
def test_failed_calls_leak_no_mappings():
    calls = _failing_calls()

    def fail_all(times):
        for _ in range(times):
            for call in calls:
                with pytest.raises(pagezero.MappingError):
                    call()
        gc.collect()

    fail_all(5)  # warm up: let Python's own allocator settle
    before = mappings()
    fail_all(200)
    assert mappings() == before


def test_successful_calls_leak_no_mappings():
    def run_all(times):
        for _ in range(times):
            pagezero.memset(size="256KB", function="default", loops=1)
            pagezero.memcpy(size="256KB", function="default", loops=1)
        gc.collect()

    run_all(5)
    before = mappings()
    run_all(100)
    assert mappings() == before


# offset: perf 6.1's malloc()ed buffers sit 16 bytes past a page boundary ---------


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_offset_is_recorded_and_only_when_set(benchmark):
    r = run(benchmark, function="default", offset=16)
    assert r.params["offset"] == 16 and r.bytes_per_loop == MB
    assert "offset" not in run(benchmark, function="default").params


@pytest.mark.parametrize("bad", [-1, 4096, 1.5, True, "16"])
def test_bad_offsets_are_value_errors(bad):
    with pytest.raises(ValueError, match="offset"):
        run("memset", offset=bad)


@pytest.mark.parametrize(
    "conditions", [{"cache": "cold"}, {"threads": 2}, {"threads": 2, "threads_mode": "private"}]
)
def test_offset_applies_under_any_conditions(conditions):
    # One C path for every condition: the offset reaches each of them.
    if conditions.get("threads", 1) > CPUS:
        pytest.skip(NEEDS_2_CPUS)
    r = run("memcpy", function="default", offset=16, **conditions)
    assert r.params["offset"] == 16 and r.loops == 2


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_one_run_is_a_resultset_of_its_result(benchmark):
    rs = getattr(pagezero, benchmark)(size="1MB", loops=2)
    assert isinstance(rs, pagezero.ResultSet) and len(rs) == 1
    assert rs[0].benchmark == benchmark and len(rs[0].samples) == 2
    assert dict(rs.runs[0]) == {"repetition": 0, "process": 0, "pid": os.getpid()}
    assert rs.bytes_per_sec > 0
