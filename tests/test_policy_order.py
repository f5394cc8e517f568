"""The clearing orders (csrc/policy.c), checked through the recording path.

clear_order() runs the C walk with a callback that records; clear_folio()
runs it with the clearing callback of the timed loops, which records too
when asked. So the order proven here is the order that is timed, and the
memory it leaves is checked byte by byte.
"""

import collections

import pytest
from conftest import kernel_names, require_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

import pagezero
from pagezero import _core
from pagezero.measure.policy.orders import (
    NEIGHBOURHOOD_RADIUS,
    PAGE_SIZE,
    STRATEGIES,
    Step,
    clear_order,
)

CANARY = 0x5C


def steps_of(strategy, nr, fault, batch_pages):
    return clear_order(strategy, nr, fault, batch_pages * PAGE_SIZE)


def cover(steps):
    """How many times each page was handed out."""
    seen = collections.Counter()
    for s in steps:
        assert s.count >= 1
        seen.update(range(s.first, s.first + s.count))
    return seen


def neighbourhood(nr, fault):
    lo = max(0, fault - NEIGHBOURHOOD_RADIUS)
    hi = min(nr - 1, fault + NEIGHBOURHOOD_RADIUS)
    return lo, hi - lo + 1


def check_order(strategy, nr, fault, batch):
    steps = steps_of(strategy, nr, fault, batch)
    assert cover(steps) == collections.Counter(range(nr)), "every page exactly once"
    last = steps[-1]
    if strategy not in ("sequential", "front-to-back"):
        assert last.first <= fault < last.first + last.count, "the fault page is in the last clear"
    if strategy == "page-at-a-time":
        assert all(s.count == 1 and not s.nontemporal for s in steps)
        assert last == Step(fault, 1, False)
        # process_huge_page converges: each page is no farther from the fault
        # than the one before it.
        dist = [abs(s.first - fault) for s in steps]
        assert dist == sorted(dist, reverse=True)
    elif strategy == "sequential":
        assert [s.first for s in steps] == list(range(0, nr, batch))
        assert all(s.count == min(batch, nr - s.first) for s in steps)
        assert not any(s.nontemporal for s in steps)
    elif strategy == "neighbourhood-last":
        first, count = neighbourhood(nr, fault)
        assert last == Step(first, count, False)
        right = [s for s in steps[:-1] if s.first > fault]
        left = [s for s in steps[:-1] if s.first < fault]
        assert list(steps[:-1]) == right + left, "right of the fault first, then left"
        assert all(s.count <= batch for s in steps[:-1])
        assert not any(s.nontemporal for s in steps)
    elif strategy == "nocache-except-target":
        assert last == Step(fault, 1, False), "the target last, with cached stores"
        assert all(s.count == 1 and s.nontemporal for s in steps[:-1])
        assert [s.first for s in steps[:-1]] == [i for i in range(nr) if i != fault]
    elif strategy == "front-to-back":
        # clear_gigantic_page(): one page per step, page i at step i, whatever the fault.
        assert steps == tuple(Step(i, 1, False) for i in range(nr))
    else:
        pytest.fail(f"untested strategy {strategy}")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("nr", [1, 2, 5, 8, 512])
@pytest.mark.parametrize("batch", [1, 3, 4, 512, 8192])
def test_every_page_once_fault_last(strategy, nr, batch):
    for fault in sorted({0, 1, 2, nr // 2 - 1, nr // 2, nr // 2 + 1, nr - 3, nr - 1}):
        if 0 <= fault < nr:
            check_order(strategy, nr, fault, batch)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(STRATEGIES), st.integers(1, 4096), st.data(), st.integers(1, 600))
def test_every_page_once_fault_last_property(strategy, nr, data, batch):
    fault = data.draw(st.integers(0, nr - 1))
    check_order(strategy, nr, fault, batch)


def test_page_at_a_time_is_process_huge_page():
    # Fault in the first half: the tail from the far end, then the window
    # [0, 2*fault) from both edges inwards.
    assert [s.first for s in steps_of("page-at-a-time", 8, 2, 1)] == [7, 6, 5, 4, 0, 3, 1, 2]
    # Second half: the head from page 0, then the window [2*fault - nr, nr).
    assert [s.first for s in steps_of("page-at-a-time", 8, 6, 1)] == [0, 1, 2, 3, 4, 7, 5, 6]
    assert [s.first for s in steps_of("page-at-a-time", 4, 0, 1)] == [3, 2, 1, 0]


def test_neighbourhood_last_is_the_merged_folio_zero_user():
    # 512 pages (2MB), fault at 100, 32MB batches: right, left, 98..102.
    assert steps_of("neighbourhood-last", 512, 100, 8192) == (
        Step(103, 409, False),
        Step(0, 98, False),
        Step(98, 5, False),
    )
    # The common fault at page 0: the neighbourhood is clamped to 0..2.
    assert steps_of("neighbourhood-last", 512, 0, 8192) == (Step(3, 509, False), Step(0, 3, False))
    # Batches split the ranges, not the neighbourhood.
    assert steps_of("neighbourhood-last", 16, 5, 4) == (
        Step(8, 4, False),
        Step(12, 4, False),
        Step(0, 3, False),
        Step(3, 5, False),
    )


def test_front_to_back_is_clear_gigantic_page():
    # Page by page from page 0, the fault in no special place (here it goes third).
    assert [s.first for s in steps_of("front-to-back", 6, 2, 8192)] == [0, 1, 2, 3, 4, 5]
    assert {s.count for s in steps_of("front-to-back", 6, 5, 4)} == {1}


def test_sequential_in_batches_covers_the_folio():
    assert steps_of("sequential", 10, 0, 4) == (
        Step(0, 4, False),
        Step(4, 4, False),
        Step(8, 2, False),
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (("sideways", 8, 0, 1), "unknown strategy"),
        (("sequential", 0, 0, 1), "refused its arguments"),
        (("sequential", 8, 8, 1), "refused its arguments"),
        (("sequential", 8, -1, 1), "refused its arguments"),
        (("sequential", 8, 0, 0), "refused its arguments"),
    ],
)
def test_core_order_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        _core.clear_order(*args)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"strategy": "sideways"}, "unknown strategy 'sideways'"),
        ({"nr_pages": 0}, "nr_pages"),
        ({"fault_index": 8}, "outside the folio"),
        ({"fault_index": True}, "must be an int"),
        ({"batch": 0}, "batch"),
        ({"batch": "6KB"}, "whole number of 4KB pages"),
    ],
)
def test_api_order_bad_input(kwargs, message):
    args = {"strategy": "sequential", "nr_pages": 8, "fault_index": 0, "batch": "4KB", **kwargs}
    with pytest.raises(ValueError, match=message):
        clear_order(**args)


# The production clearing callback, recording ---------------------------------


def canaried(nr):
    """A 4KB-page region with one canary page on each side of nr folio pages."""
    reg = pagezero.region((nr + 2) * PAGE_SIZE, thp=False)
    mv = memoryview(reg)
    mv[:] = bytes([CANARY]) * len(mv)
    folio = mv[PAGE_SIZE : (nr + 1) * PAGE_SIZE]
    return reg, mv, folio


def check_cleared(mv, nr):
    assert mv[:PAGE_SIZE] == bytes([CANARY]) * PAGE_SIZE, "wrote below the folio"
    assert mv[(nr + 1) * PAGE_SIZE :] == bytes([CANARY]) * PAGE_SIZE, "wrote past the folio"
    assert mv[PAGE_SIZE : (nr + 1) * PAGE_SIZE] == bytes(nr * PAGE_SIZE), "not all zero"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("nr, fault", [(1, 0), (16, 0), (16, 9), (512, 511), (512, 200)])
def test_clear_folio_zeroes_exactly_the_folio_in_the_recorded_order(strategy, nr, fault):
    reg, mv, folio = canaried(nr)
    try:
        steps = pagezero.clear_folio(folio, strategy, fault, batch="16KB", record=True)
        assert steps == clear_order(strategy, nr, fault, batch="16KB")
        check_cleared(mv, nr)
    finally:
        folio.release()
        mv.release()
        reg.close()


@pytest.mark.parametrize("kernel", kernel_names("clear"))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_clear_folio_with_every_kernel(strategy, kernel):
    require_kernel(kernel)
    nt = (
        kernel
        if strategy == "nocache-except-target" and not pagezero.find_kernel(kernel).temporal
        else None
    )
    reg, mv, folio = canaried(64)
    try:
        pagezero.clear_folio(folio, strategy, 37, kernel=kernel, nt_kernel=nt, batch="32KB")
        check_cleared(mv, 64)
    finally:
        folio.release()
        mv.release()
        reg.close()


def test_clear_folio_bad_input():
    buf = bytearray(8 * PAGE_SIZE)
    with pytest.raises(ValueError, match="outside the folio"):
        pagezero.clear_folio(buf, "sequential", 8)
    with pytest.raises(ValueError, match="unknown strategy"):
        pagezero.clear_folio(buf, "backwards", 0)
    with pytest.raises(ValueError, match="whole number of 4096-byte pages"):
        pagezero.clear_folio(bytearray(PAGE_SIZE + 1), "sequential", 0)
    with pytest.raises(ValueError, match="unknown clear kernel"):
        pagezero.clear_folio(buf, "sequential", 0, kernel="nope")
    with pytest.raises(ValueError, match="temporal stores"):
        pagezero.clear_folio(buf, "nocache-except-target", 0, nt_kernel="generic")
    with pytest.raises(ValueError, match="writable"):
        pagezero.clear_folio(bytes(8 * PAGE_SIZE), "sequential", 0)
