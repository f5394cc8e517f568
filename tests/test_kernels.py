"""Every available kernel writes exactly [p, p+n) and nothing else.

The buffers sit between PROT_NONE guard pages, so a write past either end
faults; canary bytes around the target prove nothing inside the region but
outside the target was written. Property tests draw lengths and
misalignments; explicit cases pin the edges (empty, one byte, ending on the
guard page).
"""

import pytest
from conftest import available_kernels, kernel_names, require_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

import pagezero

REGION = 64 * 1024
CANARY = 0xA5


@pytest.fixture(scope="module")
def guarded():
    with pagezero.region(REGION, guard=True, thp=False) as r:
        yield r


def check_fill(region, kernel, offset, length, value):
    mv = memoryview(region)
    try:
        mv[:] = bytes([CANARY]) * REGION
        pagezero.fill(mv[offset : offset + length], value, kernel)
        assert mv[offset : offset + length] == bytes([value]) * length
        assert mv[:offset] == bytes([CANARY]) * offset
        assert mv[offset + length :] == bytes([CANARY]) * (REGION - offset - length)
    finally:
        mv.release()


def offsets_and_lengths():
    return st.integers(0, 4096 + 127).flatmap(
        lambda off: st.tuples(st.just(off), st.integers(0, min(REGION - off, 3 * 4096)))
    )


@pytest.mark.parametrize("kernel", kernel_names("clear"))
@settings(max_examples=150, deadline=None)
@given(case=offsets_and_lengths())
def test_clear_writes_exactly_the_target(guarded, kernel, case):
    require_kernel(kernel)
    offset, length = case
    check_fill(guarded, kernel, offset, length, 0)


@pytest.mark.parametrize("kernel", kernel_names("clear", zero_only=False))
@settings(max_examples=60, deadline=None)
@given(case=offsets_and_lengths(), value=st.integers(1, 255))
def test_fill_writes_the_byte(guarded, kernel, case, value):
    require_kernel(kernel)
    offset, length = case
    check_fill(guarded, kernel, offset, length, value)


@pytest.mark.parametrize("kernel", kernel_names("clear"))
@pytest.mark.parametrize("length", [0, 1, 63, 64, 65, 255, 256, 257, 4095, 4096, 4097, REGION])
def test_clear_up_to_the_upper_guard(guarded, kernel, length):
    require_kernel(kernel)
    # The target ends on the last byte before the guard page.
    check_fill(guarded, kernel, REGION - length, length, 0)


@pytest.mark.parametrize("kernel", kernel_names("copy"))
@settings(max_examples=150, deadline=None)
@given(case=offsets_and_lengths(), src_offset=st.integers(0, 127), seed=st.integers(0, 255))
def test_copy_writes_exactly_the_target(guarded, kernel, case, src_offset, seed):
    require_kernel(kernel, "copy")
    offset, length = case
    pattern = bytes((seed + 7 * i) & 0xFF for i in range(256)) * (REGION // 256 + 1)
    src = bytearray(pattern[src_offset : src_offset + length])
    mv = memoryview(guarded)
    try:
        mv[:] = bytes([CANARY]) * REGION
        pagezero.copy(mv[offset : offset + length], src, kernel)
        assert mv[offset : offset + length] == src
        assert mv[:offset] == bytes([CANARY]) * offset
        assert mv[offset + length :] == bytes([CANARY]) * (REGION - offset - length)
    finally:
        mv.release()


def test_buffers_of_every_kind_are_cleared():
    import mmap

    import numpy as np

    targets = [bytearray(b"\xff" * 1000), memoryview(bytearray(b"\xff" * 1000))[10:900]]
    with mmap.mmap(-1, 8192) as m:
        m.write(b"\xff" * 8192)
        pagezero.clear(
            m, "x86-64-stosb" if "x86-64-stosb" in available_kernels("clear") else "generic"
        )
        assert m[:] == bytes(8192)
    arr = np.full((33, 17), 3.5)
    pagezero.clear(arr, "generic")
    assert not arr.any()
    fortran = np.asfortranarray(np.ones((5, 7)))
    pagezero.clear(fortran)
    assert not fortran.any()
    for t in targets:
        pagezero.clear(t, "generic")
        assert bytes(t) == bytes(len(t))


def test_unwritable_or_scattered_buffers_are_refused():
    import numpy as np

    with pytest.raises(ValueError, match="writable contiguous"):
        pagezero.clear(b"read-only bytes")
    with pytest.raises(ValueError, match="writable contiguous"):
        pagezero.clear(np.ones((8, 8))[:, ::2])
    with pytest.raises(ValueError, match="writable contiguous"):
        pagezero.clear("text")


@pytest.mark.parametrize("kernel", ["nope", "", "X86-64-STOSB"])
def test_unknown_kernel_is_a_value_error(kernel):
    with pytest.raises(ValueError, match="unknown clear kernel"):
        pagezero.clear(bytearray(8), kernel)


@pytest.mark.parametrize("value", [-1, 256, 1.0, True, "0"])
def test_fill_value_outside_a_byte_is_refused(value):
    with pytest.raises(ValueError, match="0..255"):
        pagezero.fill(bytearray(8), value)


def test_zero_only_kernel_refuses_other_bytes():
    zero_only = [k.name for k in pagezero.kernels("clear") if k.zero_only and k.available]
    if not zero_only:
        pytest.skip("no zero-only kernel (clzero) on this CPU")
    buf = bytearray(b"\x01" * 256)
    with pytest.raises(ValueError, match="only write zeros"):
        pagezero.fill(buf, 7, zero_only[0])
    assert buf == b"\x01" * 256
