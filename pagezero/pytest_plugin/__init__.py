"""pagezero in other people's CI: a pytest plugin that fails a build only on a
real clearing regression.

Registered through the ``pytest11`` entry point as ``pagezero``; disable it
with ``-p no:pagezero``. It is inert unless a test asks for the
``pagezero_bench`` fixture, carries the ``pagezero`` marker, or one of the
``--pagezero-*`` options is given: the hooks below return at once otherwise,
and nothing of pagezero's measuring code is imported by this module (the
submodules that do are imported inside the hooks that need them).

- ``pagezero_bench.memset(...)``, ``.mmap(...)``, ``.batch(...)``,
  ``.folio(...)`` measure with the public API (runs=3 unless given) and record
  every result against the test's node id (pagezero.pytest_plugin.recorder).
- ``--pagezero-save=DIR`` writes the session's results, one file per session;
  ``--pagezero-compare=DIR|FILE`` compares with the newest in DIR by the
  run-based method of ``pagezero compare``; ``--pagezero-compare-fail=PCT``
  fails a test whose change is a regression beyond PCT and significant
  (pagezero.pytest_plugin.baseline).
- ``@pytest.mark.pagezero(hugepages=..., features=..., kernels=...)`` skips
  naming the missing need, or with ``--pagezero-reserve`` reserves the
  hugepages for the test (pagezero.pytest_plugin.needs).

pytest-benchmark's ``--benchmark-compare-fail`` decides on one call's
statistics; here the decision is the comparison's: the run (one fresh
process) is the unit, Welch's t-test on the logs of per-run medians
(pagezero.analysis.significance), so noise between processes does not fail a build.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pagezero.pytest_plugin.state import STATE, PluginState, fail_percent

if TYPE_CHECKING:
    from pagezero.pytest_plugin.recorder import Bench

__all__ = ["pagezero_bench"]

MARKER = (
    "pagezero(hugepages=None, features=None, kernels=None): what a pagezero "
    "measurement needs: hugepages as {'2MB': count}, CPU features as pagezero "
    "names them, kernels by name; the test is skipped naming what is missing "
    "(with --pagezero-reserve, missing hugepages are reserved for the test)"
)

# The hugepage reservations of the running test, closed after its teardown.
_RESERVED = pytest.StashKey[contextlib.ExitStack]()
# A marked test's missing needs, in words, and the hugepages to reserve for it.
_SKIP = pytest.StashKey[str]()
_TO_RESERVE = pytest.StashKey[dict[str, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pagezero", "pagezero: clearing benchmarks in CI")
    group.addoption(
        "--pagezero-save",
        metavar="DIR",
        help="write this session's pagezero results to DIR, one timestamped file per session",
    )
    group.addoption(
        "--pagezero-compare",
        metavar="DIR|FILE",
        help="compare with a saved session: FILE, or the newest in DIR "
        "(a missing or empty DIR: nothing compared, said in the summary)",
    )
    group.addoption(
        "--pagezero-compare-fail",
        metavar="PCT",
        type=fail_percent,
        help="fail a test when its change against the baseline is a regression "
        "larger than PCT percent and significant (e.g. 5 or 5%%)",
    )
    group.addoption(
        "--pagezero-alpha",
        metavar="ALPHA",
        type=float,
        default=0.01,
        help="significance level of the comparison (default 0.01, as pagezero compare)",
    )
    group.addoption(
        "--pagezero-same-machine",
        choices=("warn", "strict"),
        default="warn",
        help="a baseline measured on another machine (CPU model, caches, memory): "
        "warn (default) compares and never fails; strict fails every test compared with it",
    )
    group.addoption(
        "--pagezero-reserve",
        action="store_true",
        help="reserve the hugepages a test's pagezero marker asks for (as root), "
        "giving them back after the test, also when it fails or is interrupted",
    )


def pytest_configure(config: pytest.Config) -> None:
    # Registered always, so that suites run with --strict-markers accept it.
    config.addinivalue_line("markers", MARKER)
    state = PluginState.from_options(config.option)
    config.stash[STATE] = state
    config.pluginmanager.register(_BeforeFixtures(), "pagezero-before-fixtures")
    if state.compare is not None:
        from pagezero.pytest_plugin.baseline import load_baseline

        load_baseline(state)  # a bad file is a usage error, before any test runs


@pytest.fixture
def pagezero_bench(request: pytest.FixtureRequest) -> Bench:
    """Measure with pagezero and record every result against this test.

    ``.memset(...)``, ``.mmap(...)`` (pagezero.faults), ``.batch(...)`` and
    ``.folio(...)`` take the API's parameters, with runs=3 unless given, and
    return what the API returns.
    """
    from pagezero.pytest_plugin.recorder import Bench

    return Bench(request.config.stash[STATE], request.node.nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("pagezero")
    if marker is None:
        return
    from pagezero.pytest_plugin.needs import missing_needs

    missing, to_reserve = missing_needs(marker, item.config.stash[STATE].reserve)
    if missing:
        # As a skip marker, so that the skipping plugin reports the skip at the
        # test's own location (with -rs, a skip raised here would be filed
        # under this plugin's file, the test unnamed): its tryfirst setup hook,
        # registered before this plugin, is called after this one.
        reason = "needs " + "; ".join(missing)
        item.add_marker(pytest.mark.skip(reason=reason))
        item.stash[_SKIP] = reason
    item.stash[_TO_RESERVE] = to_reserve


class _BeforeFixtures:
    """A plain setup hook, called after every tryfirst one (the skipping
    plugin's among them) and before the fixtures are set up (the runner's,
    registered before it)."""

    @staticmethod
    def pytest_runtest_setup(item: pytest.Item) -> None:
        reason = item.stash.get(_SKIP, None)
        if reason is not None:  # the skipping plugin is off (-p no:skipping)
            pytest.skip(reason)
        to_reserve = item.stash.get(_TO_RESERVE, None)
        if not to_reserve:
            return
        from pagezero.pytest_plugin.needs import reserve_needs

        # Here, not in the tryfirst hook: a test skipped for any reason takes no pages.
        missing = reserve_needs(to_reserve, item.stash[_RESERVED])
        if missing:
            pytest.skip("needs " + "; ".join(missing))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # The reservations of a marked test live from its setup to past its
    # teardown; closing them here, around the whole protocol, gives the pool
    # back also when the test fails, errors, or a KeyboardInterrupt (or
    # pagezero's Interrupted) unwinds through this wrapper.
    if item.get_closest_marker("pagezero") is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        item.stash[_RESERVED] = stack
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    state = item.config.stash[STATE]
    if call.when != "call" or not state.recorded(item.nodeid):
        return
    from pagezero.pytest_plugin.baseline import judge

    report = outcome.get_result()
    if not report.passed:  # failed or skipped on its own: nothing to add
        return
    try:
        failure = judge(state, item.nodeid)
    except Exception as e:  # noqa: BLE001 -- a fault here is this test's, not the session's
        failure = f"pagezero: comparing this test's results failed: {type(e).__name__}: {e}"
    # Turning the call's report into a failure, rather than raising in the
    # fixture's teardown: a teardown error would report the test as passed
    # AND errored ("1 passed, 1 error"), where the regression is the test's
    # own outcome; a hook also sees the test's results after its body is done,
    # whatever fixtures it used.
    if failure is not None:
        report.outcome = "failed"
        report.longrepr = failure


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    if state is not None and state.save_dir is not None and state.results:
        from pagezero.pytest_plugin.baseline import save_session

        save_session(state)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or not state.active():
        return
    from pagezero.pytest_plugin.baseline import summary_lines

    terminalreporter.write_sep("=", "pagezero")
    for line in summary_lines(state):
        terminalreporter.write_line(line)
