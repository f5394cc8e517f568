"""The Python API: pagezero.memset / memcpy and their Results, the direct
kernel calls (clear, fill, copy) on every kind of buffer, and the errors.

No assertion is made on how fast anything is, only that rates are positive.
"""

import dataclasses
import errno
import gc
import json
import mmap
import os

import pytest
from conftest import free_hugepages, hugepage_shortage, mem_available, run_python

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
    for k in pagezero.kernels("clear"):
        if k.zero_only:
            return k
    pytest.skip("no zero-only clear kernel on this architecture")


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
    assert r.bytes_per_sec > 0
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
            assert r.bytes_per_sec > 0


@pytest.mark.parametrize("clock", ["ns", "timeval"])
def test_time_clocks(clock):
    r = small_result(size="16MB", clock=clock)
    assert r.clock == clock
    assert r.clock_hz == 1e9
    assert r.bytes_per_sec > 0
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
    assert r.cycles_per_byte > 0
    assert r.bytes_per_sec > 0


def test_cycles_clock_needs_a_pmu():
    try:
        r = small_result(clock="cycles")
    except pagezero.UnavailableError as e:
        assert "tsc" in str(e)
        pytest.skip("no hardware cycle counter (PMU) on this machine")
    assert r.cycles_per_byte > 0
    assert r.bytes_per_sec is None


@pytest.mark.parametrize("value", [0, 7, 255, "loop"])
def test_fill_values(value):
    r = small_result(value=value)
    assert r.params["value"] == value
    assert r.bytes_per_sec > 0


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
    assert r.bytes_per_sec > 0


def test_zero_only_kernel_runs_with_zero():
    k = zero_only_kernel()
    if not k.available:
        pytest.skip(f"{k.name} is not available: {k.reason}")
    assert small_result(function=k.name, value=0).bytes_per_sec > 0


def test_2mb_hugepages_when_reserved():
    if free_hugepages("2MB") < 1:
        pytest.skip("no free 2MB hugepages (reserve some with /proc/sys/vm/nr_hugepages)")
    r = small_result(size="2MB", page="2MB")
    assert r.params["page"] == "2MB"
    assert r.bytes_per_sec > 0


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
    with pytest.raises(TypeError):
        r.params["size"] = 1
    with pytest.raises(TypeError):
        r.machine["cpu_model"] = "x"
    with pytest.raises(TypeError):
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
    "text",
    [
        "garbage",
        "",
        "[]",
        '{"schema": "something.else", "version": 1, "results": []}',
        '{"schema": "pagezero.results", "version": 1, "results": [{"benchmark": "memset"}]}',
        '{"schema": "pagezero.results", "version": "1", "results": []}',
    ],
)
def test_garbage_is_refused(tmp_path, text):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(ValueError):
        pagezero.load_results(str(path))


# Bad input: ValueError --------------------------------------------------------

BAD_MEMSET = {
    "size 0": dict(size=0),
    "size '0'": dict(size="0"),
    "size -1": dict(size=-1),
    "size '-1'": dict(size="-1"),
    "size garbage": dict(size="abc"),
    "size unknown unit": dict(size="12XB"),
    "size fraction": dict(size="1.5GB"),
    "size float": dict(size=1.5),
    "size None": dict(size=None),
    "size overflowing": dict(size="99999999TB"),
    "size overflowing int": dict(size=1 << 64),
    "page 3KB": dict(page="3KB"),
    "page garbage": dict(page="huge"),
    "chunk larger than size": dict(chunk="2MB"),
    "chunk negative": dict(chunk=-1),
    "chunk garbage": dict(chunk="abc"),
    "unknown function": dict(function="nope"),
    "copy kernel name": dict(function="x86-64-movsb"),
    "unknown clock": dict(clock="nope"),
    "loops 0": dict(loops=0),
    "loops -3": dict(loops=-3),
    "loops 'x'": dict(loops="x"),
    "loops '2'": dict(loops="2"),
    "loops float": dict(loops=2.0),
    "value 256": dict(value=256),
    "value -1": dict(value=-1),
    "value 'abc'": dict(value="abc"),
    "value '7'": dict(value="7"),
    "thp on hugepages": dict(page="2MB", size="2MB", thp=True),
    "thp garbage": dict(thp="yes"),
}

BAD_MEMCPY = {
    "size 0": dict(size=0),
    "size garbage": dict(size="abc"),
    "page 3KB": dict(page="3KB"),
    "chunk larger than size": dict(chunk="2MB"),
    "unknown function": dict(function="nope"),
    "clear kernel name": dict(function="x86-64-stosb"),
    "unknown clock": dict(clock="nope"),
    "loops 0": dict(loops=0),
}


@pytest.mark.parametrize("kw", BAD_MEMSET.values(), ids=BAD_MEMSET.keys())
def test_bad_memset_input_raises_value_error(kw):
    with pytest.raises(ValueError):
        run("memset", **kw)


@pytest.mark.parametrize("kw", BAD_MEMCPY.values(), ids=BAD_MEMCPY.keys())
def test_bad_memcpy_input_raises_value_error(kw):
    with pytest.raises(ValueError):
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


@pytest.mark.skipif(free_hugepages("1GB") < 1, reason="needs a free 1GB hugepage; none reserved")
def test_1gb_hugepages_when_reserved():
    r = pagezero.memset(size="1GB", page="1GB", loops=1)
    assert r.params["page"] == "1GB" and r.bytes_per_sec > 0


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


def available_clear_kernels():
    return [k.name for k in pagezero.kernels("clear") if k.available]


def available_copy_kernels():
    return [k.name for k in pagezero.kernels("copy") if k.available]


@pytest.mark.parametrize("make", BUFFERS.values(), ids=BUFFERS.keys())
@pytest.mark.parametrize("kernel", available_clear_kernels())
def test_clear_buffer(make, kernel):
    buf = make(4099)
    pagezero.clear(buf, kernel=kernel)
    assert bytes(buf) == bytes(4099)


@pytest.mark.parametrize("kernel", available_clear_kernels())
def test_clear_memoryview_slice_touches_only_the_slice(kernel):
    buf = _bytearray(5000)
    pagezero.clear(memoryview(buf)[3:4003], kernel=kernel)
    assert buf[:3] == b"\xaa" * 3
    assert buf[3:4003] == bytes(4000)
    assert buf[4003:] == b"\xaa" * 997


@pytest.mark.parametrize("make", BUFFERS.values(), ids=BUFFERS.keys())
@pytest.mark.parametrize(
    "kernel", [k for k in available_clear_kernels() if not pagezero.find_kernel(k).zero_only]
)
def test_fill_buffer(make, kernel):
    buf = make(4099)
    pagezero.fill(buf, 7, kernel=kernel)
    assert bytes(buf) == b"\x07" * 4099


@pytest.mark.parametrize("kernel", available_copy_kernels())
def test_copy_buffers(kernel):
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
    with pytest.raises(ValueError):
        pagezero.clear(a[::2])
    with pytest.raises(ValueError):
        pagezero.copy(a[::2], np.zeros(500, dtype=np.uint8))
    assert (a == 1).all()


def test_numpy_read_only_is_refused():
    np = pytest.importorskip("numpy")
    a = np.ones(100, dtype=np.uint8)
    a.flags.writeable = False
    with pytest.raises(ValueError):
        pagezero.clear(a)


@pytest.mark.parametrize(
    "target",
    [b"\xaa" * 100, "text", 12, None, memoryview(b"abc")],
    ids=["bytes", "str", "int", "None", "read-only memoryview"],
)
def test_clear_refuses_what_it_cannot_write(target):
    with pytest.raises(ValueError):
        pagezero.clear(target)


@pytest.mark.parametrize(
    "call",
    [
        lambda: pagezero.copy(bytearray(10), bytes(11)),
        lambda: pagezero.copy(b"x" * 10, bytes(10)),
        lambda: pagezero.copy(bytearray(10), "0123456789"),
        lambda: pagezero.fill(bytearray(10), 256),
        lambda: pagezero.fill(bytearray(10), -1),
        lambda: pagezero.fill(bytearray(10), "loop"),
        lambda: pagezero.clear(bytearray(10), kernel="nope"),
        lambda: pagezero.clear(bytearray(10), kernel=None),
        lambda: pagezero.copy(bytearray(10), bytes(10), kernel="x86-64-stosb"),
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
def test_direct_calls_refuse_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_zero_only_kernel_refuses_fill_value_7():
    k = zero_only_kernel()
    if not k.available:
        pytest.skip(f"{k.name} is not available: {k.reason}")
    buf = _bytearray(100)
    with pytest.raises(ValueError, match="zero"):
        pagezero.fill(buf, 7, kernel=k.name)
    assert buf == _bytearray(100)


def test_empty_buffers_are_fine():
    pagezero.clear(bytearray())
    pagezero.copy(bytearray(), b"")


# offset: perf 6.1's malloc()ed buffers sit 16 bytes past a page boundary ---------


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_offset_is_recorded_and_only_when_set(benchmark):
    r = run(benchmark, function="default", offset=16)
    assert r.params["offset"] == 16 and r.bytes_per_sec > 0
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
    assert r.params["offset"] == 16 and r.loops == 2 and r.bytes_per_sec > 0
