"""What the pagezero plugin knows in one pytest session: its options, the baseline, and
every result the tests recorded. Kept on the session's config (config.stash), never in a
module global: one interpreter can hold several sessions (pytester's in-process runs).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pagezero.results.resultset import Result, ResultSet

__all__ = ["STATE", "PluginState", "fail_percent", "TEST_PARAM"]

# The parameter a recorded result carries its test's node id in: a point of a session is
# (node id, point_key()), kept by ResultSet.save/load as any parameter is.
TEST_PARAM = "test"


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


@dataclass
class PluginState:
    """The options (the first fields, in the order of pytest_addoption's), the baseline
    and the recorded results of one session."""

    save_dir: str | None = None
    compare: str | None = None
    fail_pct: float | None = None
    alpha: float = 0.01
    same_machine: str = "warn"
    reserve: bool = False
    baseline: ResultSet | None = None  # None: not asked for, or not found
    baseline_name: str = "baseline"
    baseline_missing: str | None = None  # why there is none though one was asked for
    results: list[Result] = field(default_factory=list)  # params carry TEST_PARAM
    runs: list[dict[str, int]] = field(default_factory=list)
    # Each measuring call's runs are processes of their own, numbered on from here, so
    # that two calls of one point are not pooled as one run.
    next_process: int = 0
    nodes: dict[str, None] = field(default_factory=dict)  # that recorded, in order
    failed: dict[str, str] = field(default_factory=dict)  # on the comparison, with why
    saved_to: str | None = None

    @classmethod
    def from_options(cls, option: Any) -> PluginState:
        """The state for a session's parsed options; UsageError for options that make no
        sense together, or a bad alpha."""
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
        """Add a measuring call's Result or ResultSet (None: stopped before a loop),
        tagged with `nodeid`; its runs become processes of their own, so that a later
        call of the same point adds runs instead of pooling its loops into these."""
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


STATE = pytest.StashKey[PluginState]()
