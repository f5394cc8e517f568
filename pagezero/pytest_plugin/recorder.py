"""The pagezero_bench fixture's object: the public API, recorded per test.

Each method calls the public function of the same measurement with the
test's arguments (runs=3 unless given: fewer than 3 runs a side leave the
variation between runs unknown, and no change can then be called
significant; pagezero.analysis.significance) and returns its answer unchanged. A copy
of every Result is recorded with the test's node id among its parameters, so
that a point of a session is (node id, point_key()) and survives
ResultSet.save/load as any parameter does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pagezero.pytest_plugin.state import TEST_PARAM, PluginState

if TYPE_CHECKING:
    from pagezero.results.result import Result
    from pagezero.results.resultset import ResultSet

__all__ = ["Bench", "DEFAULT_RUNS", "API"]

DEFAULT_RUNS = 3

# The fixture's method names and the public functions they call: "mmap" is
# what perf bench mem calls the fault benchmark, pagezero.faults the function.
API = {"memset": "memset", "mmap": "faults", "batch": "batch", "folio": "folio"}


class Bench:
    """Measures with pagezero and records the results against one test.

    Parameters
    ----------
    state : PluginState
        The session's state, where results are recorded.
    nodeid : str
        The test's node id.
    """

    def __init__(self, state: PluginState, nodeid: str) -> None:
        self._state = state
        self.nodeid = nodeid

    def memset(self, *args: Any, **kwargs: Any) -> Result | ResultSet | None:
        """pagezero.memset(...), runs=3 unless given; the answer is recorded."""
        return self._measure("memset", args, kwargs)

    def mmap(self, *args: Any, **kwargs: Any) -> Result | ResultSet | None:
        """pagezero.faults(...) (perf bench mem mmap), runs=3 unless given; recorded."""
        return self._measure("mmap", args, kwargs)

    def batch(self, *args: Any, **kwargs: Any) -> Result | ResultSet | None:
        """pagezero.batch(...), runs=3 unless given; the answer is recorded."""
        return self._measure("batch", args, kwargs)

    def folio(self, *args: Any, **kwargs: Any) -> Result | ResultSet | None:
        """pagezero.folio(...), runs=3 unless given; the answer is recorded."""
        return self._measure("folio", args, kwargs)

    def _measure(
        self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Result | ResultSet | None:
        # Looked up at each call, not bound once: the API as the test's
        # process has it (a test may wrap or replace a function).
        import pagezero

        kwargs.setdefault("runs", DEFAULT_RUNS)
        function: Callable[..., Result | ResultSet | None] = getattr(pagezero, API[method])
        answer = function(*args, **kwargs)
        record(self._state, self.nodeid, answer)
        return answer


def record(state: PluginState, nodeid: str, answer: Result | ResultSet | None) -> None:
    """Add a measuring call's Result or ResultSet to the session, tagged with `nodeid`.

    Its runs become processes of their own in the session (numbered on from
    the last call's), so that a later call of the same point adds runs
    instead of pooling its loops into the earlier call's.

    Parameters
    ----------
    state : PluginState
        The session's state.
    nodeid : str
        The test's node id, written to each Result's params[TEST_PARAM].
    answer : Result, ResultSet or None
        What the public function returned (None: it was stopped before a loop).
    """
    from pagezero.results.resultset import ResultSet

    if answer is None:
        return
    if isinstance(answer, ResultSet):
        pairs = list(zip(answer.results, answer.runs))
    else:
        pairs = [(answer, {})]
    first = state.next_process
    for result, run in pairs:
        process = run.get("process", 0)
        state.results.append(
            dataclasses.replace(result, params={**result.params, TEST_PARAM: nodeid})
        )
        state.runs.append({"repetition": run.get("repetition", 0), "process": first + process})
        state.next_process = max(state.next_process, first + process + 1)
    state.nodes[nodeid] = None
