"""The Python API: pagezero.memset / memcpy and their Results, the direct
kernel calls (clear, fill, copy) on every kind of buffer, and the errors.

No assertion is made on how fast anything is: rates are checked against the
samples they come from, buffers against the bytes they must hold.
"""

import dataclasses
import errno
import gc
import json
import mmap
import os

import pytest
from conftest import (
    hugepage_shortage,
    kernel_names,
    mem_available,
    require_hugepages,
    require_kernel,
    run_python,
)

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
    kw.setdefault("size", "1MB")
    kw.setdefault("loops", 2)
    return getattr(pagezero, benchmark)(**kw)


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


def has_tsc_clock():
    # x86-64 says so in CPUID; every arm64 Linux machine lets user space read CNTVCT_EL0.
    return pagezero._core.ARCH == "arm64" or "tsc" in pagezero.machine()["cpu_features"]


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


@pytest.mark.parametrize("value", [0, 7, 255])
@pytest.mark.parametrize("kernel", kernel_names("clear", zero_only=False))
def test_fill_writes_the_value_between_untouched_bytes(kernel, value):
    # What a memset benchmark's kernel does to the bytes, checked on a buffer
    # that starts and ends off any alignment, with guards either side.
    require_kernel(kernel)
    buf = bytearray(b"\xaa" * 5000)
    pagezero.fill(memoryview(buf)[3:4997], value, kernel=kernel)
    assert buf[:3] == buf[4997:] == b"\xaa" * 3
    assert buf[3:4997] == bytes([value]) * 4994


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


# Result values --------------------------------------------------------------


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
    results = [small_result(), small_result(value="loop"), run("memcpy", function="default")]
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
    r = pagezero.memset(size="1GB", page="1GB", loops=1)
    assert r.params["page"] == "1GB" and r.bytes_per_loop == 1 << 30


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
    for page in ("2MB", "1GB"):
        calls += [
            lambda page=page: pagezero.memset(size=hugepage_shortage(page), page=page, loops=1),
            lambda page=page: pagezero.memcpy(size=hugepage_shortage(page, 2), page=page, loops=1),
            lambda page=page: pagezero.region(hugepage_shortage(page), page=page),
        ]
    return calls


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


# clear / fill / copy on buffers -----------------------------------------------


def _bytearray(n):
    return bytearray(b"\xaa" * n)


def _mmap(n):
    m = mmap.mmap(-1, n)
    m.write(b"\xaa" * n)
    return m


BUFFERS = {"bytearray": _bytearray, "mmap": _mmap}


@pytest.mark.parametrize("make", BUFFERS.values(), ids=BUFFERS.keys())
@pytest.mark.parametrize("kernel", kernel_names("clear"))
def test_clear_buffer(make, kernel):
    require_kernel(kernel)
    buf = make(4099)
    pagezero.clear(buf, kernel=kernel)
    assert bytes(buf) == bytes(4099)


@pytest.mark.parametrize("kernel", kernel_names("clear"))
def test_clear_memoryview_slice_touches_only_the_slice(kernel):
    require_kernel(kernel)
    buf = _bytearray(5000)
    pagezero.clear(memoryview(buf)[3:4003], kernel=kernel)
    assert buf[:3] == b"\xaa" * 3
    assert buf[3:4003] == bytes(4000)
    assert buf[4003:] == b"\xaa" * 997


@pytest.mark.parametrize("make", BUFFERS.values(), ids=BUFFERS.keys())
@pytest.mark.parametrize("kernel", kernel_names("clear", zero_only=False))
def test_fill_buffer(make, kernel):
    require_kernel(kernel)
    buf = make(4099)
    pagezero.fill(buf, 7, kernel=kernel)
    assert bytes(buf) == b"\x07" * 4099


@pytest.mark.parametrize("kernel", kernel_names("copy"))
def test_copy_buffers(kernel):
    require_kernel(kernel, "copy")
    src = bytes(range(256)) * 17 + b"tail"
    dst = bytearray(len(src))
    pagezero.copy(dst, src, kernel=kernel)
    assert dst == src

    m = _mmap(len(src))
    pagezero.copy(m, memoryview(src), kernel=kernel)
    assert m[:] == src


def test_numpy_arrays():
    np = pytest.importorskip("numpy")
    a = np.full(1000, 0x55AA, dtype=np.uint16)
    pagezero.clear(a)
    assert not a.any()

    pagezero.fill(a, 1)
    assert (a == 0x0101).all()

    src = np.arange(1000, dtype=np.uint16)
    pagezero.copy(a, src)
    assert (a == src).all()

    f = np.ones((10, 10), order="F")  # Fortran-contiguous is contiguous too
    pagezero.clear(f)
    assert not f.any()


def test_numpy_non_contiguous_slice_is_refused():
    np = pytest.importorskip("numpy")
    a = np.ones(1000, dtype=np.uint8)
    with pytest.raises(ValueError, match="must be a writable contiguous buffer"):
        pagezero.clear(a[::2])
    with pytest.raises(ValueError, match="must be a writable contiguous buffer"):
        pagezero.copy(a[::2], np.zeros(500, dtype=np.uint8))
    assert (a == 1).all()


def test_numpy_read_only_is_refused():
    np = pytest.importorskip("numpy")
    a = np.ones(100, dtype=np.uint8)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="must be a writable contiguous buffer"):
        pagezero.clear(a)


@pytest.mark.parametrize(
    "target",
    [b"\xaa" * 100, "text", 12, None, memoryview(b"abc")],
    ids=["bytes", "str", "int", "None", "read-only memoryview"],
)
def test_clear_refuses_what_it_cannot_write(target):
    with pytest.raises(
        ValueError, match=f"writable contiguous buffer .*not {type(target).__name__}"
    ):
        pagezero.clear(target)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: pagezero.copy(bytearray(10), bytes(11)), "dst has 10 bytes but src has 11"),
        (lambda: pagezero.copy(b"x" * 10, bytes(10)), "writable contiguous buffer .*not bytes"),
        (lambda: pagezero.copy(bytearray(10), "0123456789"), "contiguous buffer .*not str"),
        (lambda: pagezero.fill(bytearray(10), 256), "fill value .*not 256"),
        (lambda: pagezero.fill(bytearray(10), -1), "fill value .*not -1"),
        (lambda: pagezero.fill(bytearray(10), "loop"), "fill value .*not 'loop'"),
        (lambda: pagezero.clear(bytearray(10), kernel="nope"), "unknown clear kernel 'nope'"),
        (lambda: pagezero.clear(bytearray(10), kernel=None), "kernel must be a name .*not None"),
        (
            lambda: pagezero.copy(bytearray(10), bytes(10), kernel="x86-64-stosb"),
            "unknown copy kernel 'x86-64-stosb'",
        ),
    ],
    ids=[
        "length mismatch",
        "read-only dst",
        "str src",
        "fill 256",
        "fill -1",
        "fill loop",
        "unknown kernel",
        "kernel None",
        "clear kernel for copy",
    ],
)
def test_direct_calls_refuse_bad_input(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_zero_only_kernel_refuses_fill_value_7():
    k = require_kernel(zero_only_kernel().name)
    buf = _bytearray(100)
    with pytest.raises(ValueError, match="zero"):
        pagezero.fill(buf, 7, kernel=k.name)
    assert buf == _bytearray(100)


def test_empty_buffers_are_fine():
    # An empty slice of a buffer: nothing is written, before or after it.
    buf = bytearray(b"\xaa" * 64)
    assert pagezero.clear(memoryview(buf)[32:32]) is None
    assert pagezero.fill(memoryview(buf)[0:0], 7) is None
    assert pagezero.copy(memoryview(buf)[64:], b"") is None
    assert buf == b"\xaa" * 64


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
    if conditions.get("threads", 1) > len(os.sched_getaffinity(0)):
        pytest.skip("needs 2 CPUs")
    r = run("memcpy", function="default", offset=16, **conditions)
    assert r.params["offset"] == 16 and r.loops == 2
