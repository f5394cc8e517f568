"""The C-level tests (tests/c/test_*.c), built and run from pytest.

Each is built by tests/c/build.sh against the whole C core, once plainly and
once under ASan + UBSan (every finding fatal, leaks included), and runs
without Python in the way: the kernels between guard pages, the clocks, the
fault workloads, the clearing policies' walks and timed loops, and the
threads, cache flushing, NUMA and counter code.

The core is compiled once per mode for the whole session (build.sh's CORE_DIR,
a session temporary directory) and each test links against it: compiling it
with each test (twelve builds) was most of this file's four minutes.
"""

import os
import shutil
import subprocess

import pytest
from conftest import has_tsc_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "tests", "c", "build.sh")


@pytest.fixture(scope="session")
def core_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("c-core"))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize("mode", ["normal", "sanitize"])
@pytest.mark.parametrize(
    "test", ["kernels", "clock", "fault", "policy", "mem", "mem_tail", "stats"]
)
def test_c(test, mode, core_dir):
    env = dict(os.environ, TEST=test, EXTRA_CFLAGS="-Werror", CORE_DIR=core_dir)
    env.pop("PAGEZERO_FAKE_COUNTERS", None)  # the counter tests pick their source themselves
    env.pop("PAGEZERO_HIDE_FEATURES", None)
    proc = subprocess.run(
        ["bash", BUILD, mode], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    if test == "clock":  # test_clock prints one "ok" line per check, no tally
        lines = proc.stdout.strip().splitlines()
        if has_tsc_clock():  # a SKIP would be a clock gone missing, and exits 0
            assert lines and all(line.startswith("ok") for line in lines), proc.stdout[-500:]
        else:
            assert [line[:4] for line in lines] == ["SKIP"], proc.stdout[-500:]
    else:
        assert proc.stdout.strip().splitlines()[-1].endswith(" 0 failed"), proc.stdout[-500:]
