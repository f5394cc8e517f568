"""The CPUs this process may run on (its affinity, read once: it does not change
during a session), and the skip of a test that splits its work over two of them."""

import os

import pytest

CPUS = len(os.sched_getaffinity(0))
NEEDS_2_CPUS = "needs 2 CPUs allowed to this process"
needs_2_cpus = pytest.mark.skipif(CPUS < 2, reason=NEEDS_2_CPUS)
