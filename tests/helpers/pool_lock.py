"""One lock between the suite's workers (and any other pytest session on the machine)
for the hugepage pools, which are one per machine.

Every test holds it shared; a test marked ``owns_hugepage_pools`` holds it alone: one
that resizes a real pool, counts it exactly before and after, or maps one page more
than are free (conftest's hugepage_shortage) and must see that fail. Grouping the hugepage
test files on one worker (conftest's XDIST_GROUPS) is not enough for such a test: a
batch or folio run anywhere in the suite maps 2MB hugetlb pages when the pool has free
ones (mappings.kernel_backing), and such a run in another file took the pages a
reservation had just added (CI: "asked the kernel for 18 more ... 17 available").

flock(2) locks: the kernel drops them when a worker dies, so a crash never leaves the
suite waiting; a wait past WAIT_S (a test that hangs elsewhere) stops the session,
saying so. A turnstile (a second lock, taken by a waiting owner) keeps the shared
holders from starving it: they pass through the turnstile before each test, and an
owner waiting for the pools holds it.
"""

import contextlib
import fcntl
import os
import tempfile
import time

POOLS = os.path.join(tempfile.gettempdir(), "pagezero-tests-hugepage-pools.lock")
TURNSTILE = POOLS + ".turnstile"
# Longer than any one test runs here (the tiny report, a notebook: a minute or two).
WAIT_S = 900.0


def _open(path):
    # Usable by every user, whoever made it first (root in CI, a developer here).
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666)
    return fd


def _lock(fd, how, what):
    """flock(fd, how), waiting at most WAIT_S; then TimeoutError, saying for what."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"waited {WAIT_S:g} s for {what} ({POOLS}): a test holds it"
                ) from None
            time.sleep(0.02)


@contextlib.contextmanager
def hugepage_pools(alone):
    """Hold the pools' lock for a test: alone (exclusive) or with the others (shared)."""
    pools, turnstile = _open(POOLS), _open(TURNSTILE)
    try:
        if alone:
            # The turnstile first and kept until the pools are ours: no new test
            # starts meanwhile, the running ones finish.
            _lock(turnstile, fcntl.LOCK_EX, "the hugepage pools' turnstile")
            _lock(pools, fcntl.LOCK_EX, "the hugepage pools, alone")
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        else:
            _lock(turnstile, fcntl.LOCK_SH, "the hugepage pools' turnstile")
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            _lock(pools, fcntl.LOCK_SH, "the hugepage pools")
        yield
    finally:
        os.close(turnstile)
        os.close(pools)  # closing the last descriptor drops the lock
