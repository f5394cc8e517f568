"""The C-level tests (tests/c/test_*.c), built and run from pytest.

Each is built by tests/c/build.sh against the whole C core, once plainly and
once under ASan + UBSan (every finding fatal, leaks included), and those that
start threads (the team, the memset and fault workloads' threads, the policy
batches, stop requests from another thread) once more under ThreadSanitizer (a
race reported fails), and runs without Python in the way: the kernels between
guard pages, the clocks, the fault workloads, the clearing policies' walks and
timed loops, and the threads, cache flushing, NUMA and counter code.

Then what the build says of itself: the loops that must stay loops have no
memset/memcpy call in their disassembly under gcc and clang
(tests/c/check_loops.sh), and _core.BUILD["flags"] holds every flag the kernels
were compiled with, the release build's and the test build's.

The core is compiled once per mode for the whole session (build.sh's CORE_DIR,
a session temporary directory) and each test links against it: compiling it
with each test (twelve builds) was most of this file's four minutes.
"""

import json
import os
import shlex
import shutil
import sysconfig

import pytest
from conftest import has_tsc_clock, run_python
from helpers import core_build
from helpers.children import run

from pagezero import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "tests", "c", "build.sh")
TESTS = ["kernels", "cache", "clock", "fault", "policy", "mem", "mem_tail", "stats", "team"]
# build.sh's THREAD_TESTS: the tests that start threads, run under TSan as well.
THREADED = ["team", "mem", "fault", "policy"]


@pytest.fixture(scope="session")
def core_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("c-core"))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize(
    "test,mode",
    [(t, m) for m in ["normal", "sanitize"] for t in TESTS] + [(t, "thread") for t in THREADED],
)
def test_c(test, mode, core_dir):
    env = dict(os.environ, TEST=test, EXTRA_CFLAGS="-Werror", CORE_DIR=core_dir)
    env.pop("PAGEZERO_FAKE_COUNTERS", None)  # the counter tests pick their source themselves
    env.pop("PAGEZERO_HIDE_FEATURES", None)
    proc = run(["bash", BUILD, mode], 600, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    if test == "clock":  # test_clock prints one "ok" line per check, no tally
        lines = proc.stdout.strip().splitlines()
        if has_tsc_clock():  # a SKIP would be a clock gone missing, and exits 0
            assert lines and all(line.startswith("ok") for line in lines), proc.stdout[-500:]
        else:
            assert [line[:4] for line in lines] == ["SKIP"], proc.stdout[-500:]
    else:
        assert proc.stdout.strip().splitlines()[-1].endswith(" 0 failed"), proc.stdout[-500:]


def _setup():
    return core_build._setup()


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("opt", ["-O3", "-O2"])
def test_loops_stay_loops(cc, opt):
    """setup.py's flags for each compiler (Python's CFLAGS and CCSHARED first, as
    setuptools gives them) keep the generic kernels and the head/tail bytes loops, at
    the release build's -O3 and the C tests' -O2. Without KEEP_LOOPS, gcc and clang both
    turn the head/tail byte loops into memset calls; clang refused gcc's flag outright."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed (.ci/run installs it)")
    proc = core_build.run_check_script("check_loops.sh", cc, opt)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "4 passed, 0 failed", proc.stdout


def _release_build():
    """The release core's BUILD: the package under test with its own _core, not the
    suite's test build (which has its own flags)."""
    code = "import json; from pagezero import _core; print(json.dumps(_core.BUILD))"
    # run_python's: from the tests' folder, where `-c` cannot find a source tree's unbuilt
    # pagezero/ first (the unpacked sdist's, in CI).
    proc = run_python("-c", code, env=core_build.release_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_release_build_records_every_flag():
    """BUILD["flags"] is the release build's whole command line: Python's own CFLAGS
    (sysconfig's, OPT among them: -DNDEBUG, -fwrapv, its -O level) and CCSHARED as
    setuptools passed them, then setup.py's, in that order (the later -O wins)."""
    build = _release_build()
    assert build["test_switches"] is False
    flags = build["flags"].split()
    setup = _setup()
    kind = "clang" if build["compiler"].startswith("clang") else "gcc"
    ours = setup.compile_flags(kind)
    assert flags[-len(ours) :] == ours
    python = flags[: -len(ours)]
    for var in ("OPT", "CFLAGS", "CCSHARED"):
        words = shlex.split(sysconfig.get_config_var(var) or "")
        assert set(words) <= set(python), (var, words, python)
    assert "-O3" in flags and "-std=gnu11" in flags


def test_test_build_records_its_own_flags():
    """The suite's test build (helpers/core_build.py) records its command line the same
    way: -fPIC, setup.py's flags for its compiler, and the test switches' define."""
    setup = _setup()
    kind = setup.compiler_kind([os.environ.get("CC") or "gcc"])
    want = ["-fPIC", *setup.compile_flags(kind), core_build.DEFINE]
    assert _core.BUILD["flags"].split() == want
    assert _core.BUILD["compiler"].split()[0] == kind
