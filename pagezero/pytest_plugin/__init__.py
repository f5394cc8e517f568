"""pagezero's pytest plugin (docs/ci.rst): fails a build only on a significant clearing
regression; the measuring code is imported only in the hooks that need it."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pagezero.results.result import Result
    from pagezero.results.resultset import ResultSet
    from pagezero.runs import processes

__all__ = ["pagezero_bench"]


def fail_percent(text: str) -> float:
    """--pagezero-compare-fail's value: a percentage, "5" or "5%", not negative."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not value >= 0:  # also NaN
        message = f"{text!r} is not a percentage (a number >= 0, such as 5 or 5%)"
        raise argparse.ArgumentTypeError(message)
    return value


@dataclasses.dataclass
class PluginState:
    """A session's options (the first fields, in pytest_addoption's order) and results."""

    save_dir: str | None = None
    compare: str | None = None
    fail_pct: float | None = None
    alpha: float = 0.01
    same_machine: str = "warn"
    reserve: bool = False
    baseline: ResultSet | None = None  # None: not asked for, or not found
    baseline_name: str = "baseline"
    baseline_missing: str | None = None  # why there is none though one was asked for
    results: list[Result] = dataclasses.field(default_factory=list)  # params carry TEST_PARAM
    runs: list[dict[str, int]] = dataclasses.field(default_factory=list)
    next_process: int = 0  # the next measuring call's first process number
    nodes: dict[str, None] = dataclasses.field(default_factory=dict)  # that recorded, in order
    failed: dict[str, str] = dataclasses.field(default_factory=dict)  # on the comparison, with why
    saved_to: str | None = None

    @classmethod
    def from_options(cls, option: Any) -> PluginState:
        """The state for a session's options; UsageError for a bad or lone option."""
        options = ("save", "compare", "compare_fail", "alpha", "same_machine", "reserve")
        state = cls(*(getattr(option, f"pagezero_{name}") for name in options))  # in order
        needs_baseline = {
            "--pagezero-compare-fail": state.fail_pct is not None,
            "--pagezero-same-machine=strict": state.same_machine == "strict",
        }
        for name, given in needs_baseline.items():
            if given and state.compare is None:
                raise pytest.UsageError(
                    f"{name} needs --pagezero-compare (the baseline to compare with)"
                )
        if not 0 < state.alpha < 1:
            raise pytest.UsageError(f"--pagezero-alpha must be in (0, 1), not {state.alpha:g}")
        return state

    @property
    def threshold_pct(self) -> float:
        """The smallest change the table marks: the failing one, else compare's 2%."""
        return self.fail_pct if self.fail_pct is not None else 2.0

    def record(self, nodeid: str, answer: Result | ResultSet | None) -> None:
        """Add a measuring call's answer, its runs new processes: a later call adds runs."""
        from pagezero.pytest_plugin.baseline import TEST_PARAM
        from pagezero.results.resultset import ResultSet

        if answer is None:
            return
        pairs = (
            zip(answer.results, answer.runs) if isinstance(answer, ResultSet) else [(answer, {})]
        )
        first = self.next_process
        for result, run in pairs:
            process = first + run.get("process", 0)
            params = {**result.params, TEST_PARAM: nodeid}
            self.results.append(dataclasses.replace(result, params=params))
            self.runs.append({"repetition": run.get("repetition", 0), "process": process})
            self.next_process = max(self.next_process, process + 1)
        self.nodes[nodeid] = None


# On the session's config: one interpreter can hold several sessions (pytester's).
STATE = pytest.StashKey[PluginState]()

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
    text = "write this session's pagezero results to DIR, one timestamped file per session"
    group.addoption("--pagezero-save", metavar="DIR", help=text)
    text = "compare with a saved session: FILE, or the newest in DIR (a missing or empty DIR: "
    text += "nothing compared, said in the summary)"
    group.addoption("--pagezero-compare", metavar="DIR|FILE", help=text)
    text = "fail a test when its change against the baseline is a regression larger than PCT "
    text += "percent and significant (e.g. 5 or 5%%)"
    group.addoption("--pagezero-compare-fail", metavar="PCT", type=fail_percent, help=text)
    text = "significance level of the comparison (default 0.01, as pagezero compare)"
    group.addoption("--pagezero-alpha", metavar="ALPHA", type=float, default=0.01, help=text)
    text = "a baseline measured on another machine (CPU model, caches, memory): warn (default) "
    text += "compares and never fails; strict fails every test compared with it"
    group.addoption(
        "--pagezero-same-machine", choices=("warn", "strict"), default="warn", help=text
    )
    text = "reserve the hugepages a test's pagezero marker asks for (as root), giving them back "
    text += "after the test, also when it fails or is interrupted"
    group.addoption("--pagezero-reserve", action="store_true", help=text)


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
    """Measure with pagezero and record every result against this test: a :class:`Bench`
    (docs/ci.rst, "The fixture")."""
    return Bench(request.config.stash[STATE], request.node.nodeid)


# Fewer runs a side leave the variation between runs unknown: no change is significant.
DEFAULT_RUNS = 3


class Bench:
    """pagezero.memset, .faults (as ``mmap``, perf's name), .batch and .folio, runs=3 unless
    given, each answer returned and recorded against one test (`nodeid`)."""

    def __init__(self, state: PluginState, nodeid: str) -> None:
        self._state, self.nodeid = state, nodeid

    def _measure(self, name: str, *args: Any, **kwargs: Any) -> Result | ResultSet | None:
        import pagezero  # looked up at each call: a test may wrap or replace a function

        kwargs.setdefault("runs", DEFAULT_RUNS)
        answer: Result | ResultSet | None = getattr(pagezero, name)(*args, **kwargs)
        self._state.record(self.nodeid, answer)
        return answer

    if TYPE_CHECKING:  # the public calls' own parameters, so type checkers check a test's
        memset = staticmethod(processes.memset)
        mmap = staticmethod(processes.faults)
        batch = staticmethod(processes.batch)
        folio = staticmethod(processes.folio)
    else:
        memset = functools.partialmethod(_measure, "memset")
        mmap = functools.partialmethod(_measure, "faults")
        batch = functools.partialmethod(_measure, "batch")
        folio = functools.partialmethod(_measure, "folio")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("pagezero")
    if marker is None:
        return
    from pagezero.pytest_plugin.needs import missing_needs

    missing, to_reserve = missing_needs(marker, item.config.stash[STATE].reserve)
    if missing:
        # A skip marker: the skipping plugin (its hook called after this one) files it under
        # the test's location, where -rs would show a skip raised here under this file.
        reason = "needs " + "; ".join(missing)
        item.add_marker(pytest.mark.skip(reason=reason))
        item.stash[_SKIP] = reason
    item.stash[_TO_RESERVE] = to_reserve


class _BeforeFixtures:
    """A setup hook after the skipping plugin's, before the fixtures (the runner's hook)."""

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
    # A marked test's reservations live past its teardown, given back however it ends.
    with contextlib.ExitStack() as stack:
        item.stash[_RESERVED] = stack
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    state, report = item.config.stash[STATE], outcome.get_result()
    # Failed or skipped on its own, or measured nothing: nothing to add.
    if call.when != "call" or item.nodeid not in state.nodes or not report.passed:
        return
    from pagezero.pytest_plugin.baseline import judge

    try:
        failure = judge(state, item.nodeid)
    except Exception as e:  # noqa: BLE001 -- a fault here is this test's, not the session's
        failure = f"pagezero: comparing this test's results failed: {type(e).__name__}: {e}"
    # The call's report made a failure: an error in a teardown would read "1 passed, 1 error".
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
    if state is None or not (state.results or state.save_dir or state.compare):
        return
    from pagezero.pytest_plugin.baseline import summary_lines

    terminalreporter.write_sep("=", "pagezero")
    for line in summary_lines(state):
        terminalreporter.write_line(line)
