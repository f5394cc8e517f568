import os
import re
import subprocess
import sys
import time

# First: the suite's build of pagezero (test switches compiled in) goes first on sys.path.
import helpers.core_build as core_build
import pytest
from helpers.children import default_stop_signals, finish
from helpers.children import stop_signals_as_usual as stop_signals_as_usual
from helpers.cli import run_cli
from helpers.fake_sysfs import FakeKernel
from helpers.pool_lock import hugepage_pools
from hypothesis import settings

import pagezero

# Property and fuzz tests draw the same examples on every run (derandomize): a suite
# that passed here passes in CI, and a failure found once is found again. Exploring
# with fresh random examples is a choice: PAGEZERO_HYPOTHESIS=explore. No deadline: a
# shared 2-core machine makes any one example slow now and then.
settings.register_profile("pagezero", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("PAGEZERO_HYPOTHESIS", "pagezero"))


def installed_package_problem():
    """None when the pagezero under test is the installed one (in this interpreter's
    site-packages; the suite imports a mirror of it with the test core, helpers/core_build.py),
    else a line saying where it was imported from."""
    import sysconfig

    installed = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    if os.path.dirname(core_build.SOURCE) in installed:
        return None
    return (
        f"pagezero was imported from {core_build.SOURCE}, not from site-packages "
        f"({', '.join(installed)})"
    )


def pytest_configure(config):
    # CI installs the wheel, then the sdist, and runs the suite from the checkout
    # with PAGEZERO_TEST_INSTALLED=1: the package tested must be the installed one,
    # never the checkout's pagezero/ (which a `python -m pytest` or an editable
    # install would put first on sys.path). Checked before any test runs.
    if os.environ.get("PAGEZERO_TEST_INSTALLED") == "1":
        problem = installed_package_problem()
        if problem:
            raise pytest.UsageError(f"PAGEZERO_TEST_INSTALLED=1: {problem}")
    # The suite's own build, whatever was installed: a release core would ignore the
    # test switches that many tests set.
    if not pagezero._core.BUILD["test_switches"]:
        raise pytest.UsageError(f"{pagezero._core.__file__} is not the suite's test build")


def _pool_count(page, name):
    kb = {"2MB": 2048, "1GB": 1048576}[page]
    try:
        with open(f"/sys/kernel/mm/hugepages/hugepages-{kb}kB/{name}") as f:
            return int(f.read())
    except OSError:
        return 0


def free_hugepages(page):
    """Hugepages of `page` ("2MB" or "1GB") a new mapping can have: free_hugepages
    less resv_hugepages (free, but promised to another process's mapping), read
    from sysfs at the moment of asking. The one gate of every hugepage test."""
    return max(0, _pool_count(page, "free_hugepages") - _pool_count(page, "resv_hugepages"))


PAGE_SHIFT = {"2MB": 21, "1GB": 30}


def has_pool(page):
    """Whether this kernel has a pool of `page` hugepages at all (x86-64 kernels
    without gbpages, and many arm64 ones, have no 1GB pool)."""
    kb = {"2MB": 2048, "1GB": 1048576}[page]
    return os.path.isdir(f"/sys/kernel/mm/hugepages/hugepages-{kb}kB")


def require_pool(page):
    if not has_pool(page):
        pytest.skip(f"this kernel has no {page} hugepage pool")


def hugepage_shortage(page, buffers=1):
    """A size whose `buffers` mappings of `page` pages the free pool cannot all
    give. With two buffers the first mapping succeeds and the second fails,
    so the clean-up after a partial success is exercised too. Skips the test
    where the kernel has no such pool (the error is then another). A test using it
    counts on the free pages staying as read: mark it owns_hugepage_pools."""
    require_pool(page)
    return (free_hugepages(page) // buffers + 1) << PAGE_SHIFT[page]


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def hugetlb_bytes(pid):
    """The hugetlb pages process `pid` maps now (HugetlbPages of its status), 0 once
    it is gone: a run has mapped its own hugepages, whatever else moves the pool."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(x.split()[1]) * 1024 for x in f if x.startswith("HugetlbPages:")), 0)
    except OSError:
        return 0


# How long a test waits for reserved hugepages that another test holds (the suite
# runs on several workers, and a measurement on 2MB pages outside the hugepage group,
# e.g. a batch run's region, can hold the whole 2MB pool for a few seconds).
HUGEPAGE_WAIT_S = 60.0


def require_hugepages(page, count=1):
    """Skip the running test unless `count` pages of `page` can be mapped now.
    Called inside the test, not as a collection-time mark: the pools are shared
    and change while the suite runs. Where the pool has the pages but another
    test holds them, wait for them (HUGEPAGE_WAIT_S) before skipping."""
    deadline = time.monotonic() + HUGEPAGE_WAIT_S
    while free_hugepages(page) < count and _pool_count(page, "nr_hugepages") >= count:
        if time.monotonic() > deadline:
            pytest.skip(
                f"needs {count} free {page} hugepage(s); reserved, but held by another "
                f"process for {HUGEPAGE_WAIT_S:g} s"
            )
        time.sleep(0.1)
    if free_hugepages(page) < count:
        pytest.skip(
            f"needs {count} free {page} hugepage(s); none reserved "
            f"(as root: echo N > /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages)"
        )


def require_kernel(name, kind="clear"):
    """Skip the running test unless kernel `name` runs on this CPU, saying which
    feature it lacks; returns the kernel. Tests are parametrized over every
    kernel of the registry (the same on every machine of an architecture), so a
    broken feature check shows as a changed set of skips (tools: .ci/check_skips.py)."""
    k = pagezero.find_kernel(name, kind)
    if not k.available:
        pytest.skip(f"{name} is not available on this CPU: {k.reason}")
    return k


def kernel_names(kind, zero_only=None):
    """Every kernel of `kind` in the registry; zero_only=False leaves the zero-only ones out."""
    return [k.name for k in pagezero.kernels(kind) if zero_only is None or k.zero_only == zero_only]


def available_kernels(kind):
    """The kernels of `kind` this CPU runs, read when called (inside a test)."""
    return [k.name for k in pagezero.kernels(kind) if k.available]


def _maps():
    with open(f"/proc/{os.getpid()}/maps") as f:
        for line in f:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            yield start, end


def mapping_count():
    """Mappings of this process. Python's allocator maps and unmaps arenas
    too, so compare counts only around calls that map nothing on success, and
    take a count that fell (an arena given back) for nothing left behind."""
    return sum(1 for _ in _maps())


def is_mapped(address):
    return any(start <= address < end for start, end in _maps())


# Subprocesses run from here, not from the repository root: `python -m` and
# `python -c` put their working directory first on sys.path, and the root's
# pagezero/ is the source tree, without the built extension.
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def run_python(*args, cwd=None, timeout=300, **kwargs):
    """Run this interpreter with `args` against the installed pagezero, as start_python
    starts it; the test fails with what it printed if it runs past `timeout` seconds."""
    with start_python(*args, cwd=cwd, **kwargs) as proc:
        out, err = finish(proc, timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# The command line -----------------------------------------------------------------

# perf's print_bps(): " %14f GB/sec" and friends, K = 1024.
RATE_RE = re.compile(r"^ (?P<num> *\d+\.\d{6}) (?P<unit>bytes|KB|MB|GB)/sec$")
# perf's "# function 'NAME' (DESCRIPTION)" header of each function's block.
FUNCTION_RE = re.compile(r"^# function '(?P<name>[^']+)' \((?P<description>.*)\)$")


class Child(subprocess.Popen):
    """A child a test started (start_python): used as a context manager, leaving the
    `with` kills it if it still runs, closes its pipes and reaps it, however the test
    ended. (Popen's own exit only waits: a failed test would hang on a child left
    measuring.) A pipe left open is closed by the collector later, under another test,
    whose run its ResourceWarning then fails (filterwarnings = error)."""

    def __exit__(self, *exc):
        if self.poll() is None:
            self.kill()
        return super().__exit__(*exc)  # closes stdout, stderr, stdin; waits

    def left_open(self):
        """Whether the test left this child running or one of its pipes open."""
        pipes = (self.stdin, self.stdout, self.stderr)
        return self.returncode is None or any(p is not None and not p.closed for p in pipes)


# The children started by the running test (close_left_children, _children_closed).
_started = []


def start_python(*args, cwd=None, **kwargs):
    """Start this interpreter with `args` against the installed pagezero, its
    stdout and stderr piped as text: the signal tests' child, which they read
    ("ready", "measuring": helpers/children.read_line) and signal while it runs.
    It does not count on this suite's parent (helpers/children.py): the stop signals
    at their default action, stdin on /dev/null. `kwargs` go to Popen. Use as
    ``with start_python(...) as proc``: a child left running or with a pipe open fails
    the test (_children_closed)."""
    options = {"stdin": subprocess.DEVNULL, "preexec_fn": default_stop_signals, **kwargs}
    proc = Child(
        [sys.executable, *args],
        cwd=cwd or TESTS_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **options,
    )
    _started.append(proc)
    return proc


def close_left_children():
    """End every child of start_python since the last call that is still running or has
    a pipe open, closing its pipes: those children."""
    left = [proc for proc in _started if proc.left_open()]
    for proc in left:
        proc.__exit__(None, None, None)
    _started.clear()
    return left


@pytest.fixture(autouse=True)
def _children_closed():
    """Fail the test that left a child of start_python running or a pipe of one open
    (then end it and close them): the leak is charged to the test that made it, not to
    whichever test runs when the collector finds the file."""
    _started.clear()
    yield
    left = close_left_children()
    if left:
        pytest.fail(
            f"left {len(left)} child(ren) running or with a pipe open "
            f"({', '.join(repr(p.args[1:3]) for p in left)}): "
            "use `with start_python(...) as proc`",
            pytrace=False,
        )


def pagezero_cli(*args, cwd=None, **kwargs):
    """Run `python -m pagezero ARGS` and return the CompletedProcess."""
    return run_python("-m", "pagezero", *[str(a) for a in args], cwd=cwd, **kwargs)


def pagezero_main(capsys, *args):
    """Run the command line in this process (tests/helpers/cli.py run_cli) and return
    what a subprocess would: returncode, stdout, stderr. `capsys` is no longer needed
    (run_cli captures on its own) and kept for the callers that pass it."""
    return run_cli(*args)


def ok(proc):
    """Assert a run succeeded cleanly and return its stdout."""
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc.stdout


def check_usage_error(proc):
    """Exit 2 with a single 'pagezero: error:' line, no traceback, nothing on stdout;
    returns the line."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.startswith("pagezero: error:"), proc.stderr
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stdout == ""
    return proc.stderr.strip()


def one_line_error(proc, status):
    """Exit `status` with a single 'pagezero: error:' line and no traceback; returns the line."""
    assert proc.returncode == status, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pagezero: error:"), proc.stderr
    return lines[0]


def check_environment_error(proc, *words):
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.startswith("pagezero: error:"), proc.stderr
    for word in words:
        assert word in proc.stderr
    assert not any(RATE_RE.match(line) for line in proc.stdout.splitlines())


def check_rate_line(line):
    m = RATE_RE.match(line)
    assert m, f"not a perf rate line: {line!r}"
    assert len(m["num"]) >= 14  # %14f
    assert float(m["num"]) > 0


def has_cycle_counter():
    try:
        pagezero.memset(size=4096, loops=1, clock="cycles")
    except pagezero.UnavailableError:
        return False
    return True


def has_tsc_clock():
    # x86-64 says so in CPUID; every arm64 Linux machine lets user space read CNTVCT_EL0.
    return pagezero._core.ARCH == "arm64" or "tsc" in pagezero.machine()["cpu_features"]


def mem_total():
    with open("/proc/meminfo") as f:
        return int(f.readline().split()[1]) * 1024  # MemTotal comes first


def never_available(page, threads=1):
    """A size whose `threads` regions of `page` hugepages exceed the machine's
    memory: a shortage that no other user of the shared pools can lift
    between the check and the mapping (freeing pages, growing the pool)."""
    require_pool(page)
    size = 1 << PAGE_SHIFT[page]
    return (mem_total() // threads // size + 1) * size


# A fake sysfs for hugepage pools (helpers/fake_sysfs.py's FakeKernel) ---------------


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """hugepages.py reading and writing a FakeKernel's pool, as root."""
    from pagezero.system import hugepages

    kernel = FakeKernel(tmp_path)
    monkeypatch.setattr(hugepages, "SYSFS", str(tmp_path))
    monkeypatch.setattr(hugepages, "_write", kernel.write)
    monkeypatch.setattr(hugepages.os, "geteuid", lambda: 0)
    return kernel


# Machine state, read when a test runs ------------------------------------------------


# The test switches (csrc/switches.h): PAGEZERO_* variables that the suite's build of the
# C core reads (helpers/core_build.py), once, at import.


@pytest.fixture(autouse=True)
def _switches_as_set():
    """After each test, this process's core reads the switches again, once monkeypatch
    has put the environment back (this fixture is set up first, so torn down last)."""
    yield
    pagezero._core._read_switches()


@pytest.fixture
def switch(monkeypatch):
    """switch(NAME=value, ...): set test switches for this process and the ones this
    test starts (None: unset), and have this process's core read them again."""

    def set_switches(**values):
        for name, value in values.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        pagezero._core._read_switches()

    return set_switches


@pytest.fixture
def without_pmu(switch):
    """A machine without a PMU, on any machine: PAGEZERO_HIDE_PMU makes the cycles clock
    and the counters fail to open as perf_event_open(2) does without one, here and in
    the processes a test starts."""
    switch(PAGEZERO_HIDE_PMU="1", PAGEZERO_FAKE_COUNTERS=None)
    assert not has_cycle_counter()


@pytest.fixture
def with_pmu():
    """Skip unless this machine has a hardware cycle counter (PMU)."""
    if not has_cycle_counter():
        pytest.skip("no hardware cycle counter (PMU) on this machine")


@pytest.fixture(scope="session")
def tiny_report_run(tmp_path_factory):
    """`pagezero report` at PAGEZERO_SCALE=tiny, run once a session as a user runs it
    (a subprocess; several seconds of measuring): (its folder, the CompletedProcess).
    The tests sharing it only read the folder."""
    out = tmp_path_factory.mktemp("report") / "out"
    # --no-reserve: as root the report would resize the real pools, which a test holding
    # them shared must not (helpers/pool_lock.py); tests/test_report_pools.py does, alone.
    env = dict(os.environ, PAGEZERO_SCALE="tiny")
    return out, pagezero_cli("report", "-o", out, "--no-reserve", env=env)


@pytest.fixture(scope="session")
def tiny_report(tiny_report_run):
    """The folder of the session's tiny report, which must have run to the end."""
    out, proc = tiny_report_run
    ok(proc)
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test, its fixtures' setup and teardown included, holds the hugepage pools'
    lock (helpers/pool_lock.py): alone when marked owns_hugepage_pools, else shared."""
    with hugepage_pools(alone=item.get_closest_marker("owns_hugepage_pools") is not None):
        yield


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test left open (one that looks at a figure object keeps it):
    pyplot holds every figure until closed, and past 20 it warns, an error here."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


# Running in parallel (pytest-xdist, `-n auto --dist loadfile`) -------------------------

# Each test file runs whole on one worker (a module-scoped fixture is built once), and
# the files that share the machine's state run one after another, on one worker, as
# one group: the hugepage pools are one per machine (a test that maps or reserves pages
# while another checks the pool would turn that one's run into a skip, or its exact
# count into a failure), and the tests that time a real signal into a running process
# are the most sensitive to a neighbour's load. The C tests (test_c_core) build the C
# core once per session, so they stay on one worker too. The groups are xdist's work
# units here, not its xdist_group marks: pytest 9.2 took away the node ids that marks
# are grouped by (xdist 3.8's loadgroup then spreads a group over every worker).
# The group keeps the hugepage files off each other's way; a test that counts a pool
# exactly also needs every other file's runs (which map 2MB pages wherever the pool has
# free ones) stopped meanwhile: it is marked owns_hugepage_pools, and runs alone
# (pytest_runtest_protocol above, helpers/pool_lock.py).
XDIST_GROUPS = {
    "hugepages": {
        "test_advise",  # advise measures the 2MB hugetlb backing where the pool has pages
        "test_backing",
        "test_bench_api",
        "test_browser",  # its report (tiny_report) measures the hugepage sizes that have pages
        "test_cli",
        "test_core_bindings",
        "test_fault",
        "test_fault_cli",
        "test_hugepages",
        "test_mappings",
        "test_node_hugepages",
        "test_notebooks",  # measure the hugepage sizes whose pools have pages
        "test_policy_api",
        "test_policy_cli",  # advise --quick measures the 2MB hugetlb backing too
        "test_predict_measure",
        "test_pytest_plugin_markers",  # reserves pages for its marker
        "test_region",
        "test_report",  # the fault study maps the hugepage sizes that have pages
        "test_report_pools",  # resizes the real pools (root)
        "test_progress_cli",  # advise and predict map 2MB hugetlb pages where there are some
        "test_report_html",  # the same, and shares the session's tiny_report
        "test_shortage_hints",
        "test_signals_fault",  # signals into runs holding the real pool
        "test_signals_policy",  # a 2MB folio, backed by a hugepage where the pool has one
        "test_sysinfo",
    },
    "signals": {
        "test_interrupt_pool",
        "test_interrupt_sweeps",
        "test_signals_mem",
        "test_signals_runs",
    },
    "c-core": {"test_c_core"},
}
GROUP_OF = {module: group for group, modules in XDIST_GROUPS.items() for module in modules}
# The groups first, the longest first: one worker starts on the hugepages while the other
# takes the C tests and the signals, then the files.
GROUP_ORDER = ["hugepages", "signals", "c-core"]


def xdist_scope(nodeid):
    """The work unit a worker takes whole: the group of the test's file, or the file."""
    path = nodeid.split("::", 1)[0]
    return GROUP_OF.get(os.path.splitext(os.path.basename(path))[0], path)


def pytest_collection_modifyitems(config, items):
    """The groups' tests first (a stable sort: the order within each is kept), so that
    the workers start on them (xdist hands out work in collection order, given
    --no-loadscope-reorder)."""
    last = len(GROUP_ORDER)
    items.sort(
        key=lambda item: (
            GROUP_ORDER.index(GROUP_OF[item.path.stem]) if item.path.stem in GROUP_OF else last
        )
    )


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: inert without it
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, but for the groups above, each one work unit."""
    if config.getvalue("dist") != "loadfile":
        return None  # another --dist asked for: xdist's own
    from xdist.scheduler import LoadFileScheduling

    class FilesAndMachineGroups(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return xdist_scope(nodeid)

    return FilesAndMachineGroups(config, log)
