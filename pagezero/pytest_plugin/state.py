"""What the pagezero plugin knows in one pytest session: its options, the
baseline, and every result the tests recorded.

Kept on the session's config (config.stash), never in a module global: one
interpreter can hold several sessions (pytester's in-process runs), each with
its own options and results.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pagezero.results.resultset import Result, ResultSet

__all__ = ["STATE", "PluginState", "fail_percent", "TEST_PARAM"]

# The parameter a recorded result carries its test's node id in: a point of a
# session is (node id, point_key()), and the parameters are what point_key()
# and ResultSet.save/load keep of a result.
TEST_PARAM = "test"


def fail_percent(text: str) -> float:
    """--pagezero-compare-fail's value: a percentage, "5" or "5%", not negative.

    Raises
    ------
    argparse.ArgumentTypeError
        In one line, for anything else (pytest reports it as a usage error).
    """
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not value >= 0:  # also NaN
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a percentage (a number >= 0, such as 5 or 5%)"
        )
    return value


@dataclass
class PluginState:
    """The options, the baseline and the recorded results of one session."""

    save_dir: str | None = None
    compare: str | None = None
    fail_pct: float | None = None
    alpha: float = 0.01
    same_machine: str = "warn"
    reserve: bool = False
    # The baseline (None: not asked for, or not found) and its name in the table.
    baseline: ResultSet | None = None
    baseline_name: str = "baseline"
    # Why there is no baseline though one was asked for (a missing or empty DIR).
    baseline_missing: str | None = None
    # Every recorded Result (its params carrying TEST_PARAM) and its run.
    results: list[Result] = field(default_factory=list)
    runs: list[dict[str, int]] = field(default_factory=list)
    # The next free process number: each measuring call's runs are processes
    # of their own, so that two calls of one point are not pooled as one run.
    next_process: int = 0
    # The node ids that recorded a result, in first-seen order.
    nodes: dict[str, None] = field(default_factory=dict)
    # Node ids that failed on the comparison, with why, in order.
    failed: dict[str, str] = field(default_factory=dict)
    saved_to: str | None = None

    @classmethod
    def from_options(cls, option: Any) -> PluginState:
        """The state for a session's parsed options (config.option).

        Raises
        ------
        pytest.UsageError
            Options that make no sense together, or a bad alpha.
        """
        state = cls(
            save_dir=option.pagezero_save,
            compare=option.pagezero_compare,
            fail_pct=option.pagezero_compare_fail,
            alpha=option.pagezero_alpha,
            same_machine=option.pagezero_same_machine,
            reserve=option.pagezero_reserve,
        )
        if state.fail_pct is not None and state.compare is None:
            raise pytest.UsageError(
                "--pagezero-compare-fail needs --pagezero-compare (the baseline to compare with)"
            )
        if state.same_machine == "strict" and state.compare is None:
            raise pytest.UsageError(
                "--pagezero-same-machine=strict needs --pagezero-compare "
                "(the baseline to compare with)"
            )
        if not 0 < state.alpha < 1:
            raise pytest.UsageError(f"--pagezero-alpha must be in (0, 1), not {state.alpha:g}")
        return state

    @property
    def threshold_pct(self) -> float:
        """The smallest change the table marks: the failing one when given, else
        pagezero compare's default of 2%."""
        return self.fail_pct if self.fail_pct is not None else 2.0

    def active(self) -> bool:
        """Whether the session has anything to say: results or a pagezero option."""
        return bool(self.results or self.save_dir or self.compare)

    def recorded(self, nodeid: str) -> bool:
        """Whether the test `nodeid` recorded a result."""
        return nodeid in self.nodes


STATE = pytest.StashKey[PluginState]()
