"""The suite's lock on the hugepage pools (helpers/pool_lock.py), on lock files of its own:
the real ones are held by this very test (shared) while it runs."""

import fcntl
import os

import pytest
from helpers import pool_lock


@pytest.fixture
def lock_files(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_lock, "POOLS", str(tmp_path / "pools.lock"))
    monkeypatch.setattr(pool_lock, "TURNSTILE", str(tmp_path / "pools.lock.turnstile"))
    monkeypatch.setattr(pool_lock, "WAIT_S", 0.2)


def test_tests_share_the_pools(lock_files):
    with pool_lock.hugepage_pools(alone=False), pool_lock.hugepage_pools(alone=False):
        pass


@pytest.mark.parametrize("first, second", [(False, True), (True, False), (True, True)])
def test_an_owner_runs_alone(lock_files, first, second):
    with pool_lock.hugepage_pools(alone=first):
        with pytest.raises(TimeoutError, match="waited 0.2 s for the hugepage pools"):
            with pool_lock.hugepage_pools(alone=second):
                pass
    with pool_lock.hugepage_pools(alone=second):  # free again once the first is done
        pass


def test_a_waiting_owner_lets_no_new_test_start(lock_files):
    # An owner waiting for the pools holds the turnstile: a test that would share them
    # waits behind it instead of taking them first.
    fd = os.open(pool_lock.TURNSTILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(TimeoutError, match="the hugepage pools' turnstile"):
            with pool_lock.hugepage_pools(alone=False):
                pass
    finally:
        os.close(fd)
    with pool_lock.hugepage_pools(alone=False):
        pass
