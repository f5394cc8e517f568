"""The direct kernel calls (pagezero.clear, fill, copy) on every kind of buffer:
the bytes they must write, the bytes beside them they must leave alone, and the
buffers they refuse."""

import mmap

import pytest
from conftest import kernel_names, require_kernel

import pagezero


def zero_only_kernel():
    names = kernel_names("clear", zero_only=True)
    if not names:
        pytest.skip("no zero-only clear kernel on this architecture")
    return pagezero.find_kernel(names[0])


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
