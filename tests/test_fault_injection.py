"""Failures made on demand through the C core's test-only switches, in a fresh
process each (the switches count calls from its start):
$PAGEZERO_FAIL_MAP=N fails the Nth mapping (csrc/region.c), as mmap(2) does when
memory runs out. A copy whose second buffer fails must give the first back: a
leaked 256MB buffer shows in the process's VmSize, however the allocator moves."""

import os

import pytest
from conftest import run_python

SIZE = 256 << 20

SCRIPT = """
import errno, sys, pagezero

def vm_size():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))

call = {
    "memset": lambda: pagezero.memset(SIZE, loops=1, function="default"),
    "memcpy": lambda: pagezero.memcpy(SIZE, loops=1, function="default"),
    "region": lambda: pagezero.region(SIZE).close(),
}[sys.argv[1]]
before = vm_size()
try:
    call()
except pagezero.MappingError as e:
    assert e.errno == errno.ENOMEM, e
    print("failed:", e)
else:
    raise SystemExit("the mapping did not fail")
grown = vm_size() - before
assert grown < SIZE // 2, f"VmSize grew by {grown} bytes: a buffer leaked"
call()  # the next mapping is not failed: everything works again
print("ok")
""".replace("SIZE", str(SIZE))


@pytest.mark.parametrize(
    "what, nth",
    [("memset", 1), ("memcpy", 1), ("memcpy", 2), ("region", 1)],
    ids=["memset", "memcpy-first", "memcpy-second", "region"],
)
def test_a_failed_mapping_is_an_error_and_leaks_nothing(what, nth):
    env = dict(os.environ, PAGEZERO_FAIL_MAP=str(nth))
    proc = run_python("-c", SCRIPT, what, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("failed:") and proc.stdout.endswith("ok\n")
