"""Edges the type hints brought to light (mypy, with the C core's stub)."""

import pytest

import pagezero
from pagezero.measure import fault


def test_memset_refuses_no_threads_mode_in_one_line():
    # Conditions take threads_mode=None (batch and folio fix their own); the C
    # core's memset needs "shared" or "private" and raised a TypeError for None.
    with pytest.raises(ValueError, match="unknown threads mode None"):
        pagezero.memset("64KB", threads_mode=None, loops=1)
    with pytest.raises(ValueError, match="unknown threads mode None"):
        pagezero.memcpy("64KB", threads_mode=None, loops=1)


def test_headroom_without_a_fault_run_is_none(monkeypatch):
    # A program's own handler that takes a stop signal and returns before the
    # first loop leaves run() with nothing (pagezero.interrupt.finish returns None):
    # there is no fault rate to set the clears beside.
    monkeypatch.setattr(fault, "run", lambda p, function, warmed=False: None)
    assert fault.headroom(size="64KB", loops=1) is None
