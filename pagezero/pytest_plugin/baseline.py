"""Saving a session's results, and comparing a session with a saved one as ``pagezero
compare`` does, deciding which tests fail (docs/ci.rst)."""

from __future__ import annotations

import contextlib
import datetime
import glob
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from pagezero.analysis import compare as comparison
from pagezero.analysis.significance import METHOD, REGRESSION
from pagezero.results.points import point_key
from pagezero.results.result import Result
from pagezero.results.resultset import ResultSet

if TYPE_CHECKING:
    from pagezero.pytest_plugin import PluginState

# The parameter a recorded result carries its test's node id in.
TEST_PARAM = "test"

__all__ = ["load_baseline", "save_session", "judge", "summary_lines", "PATTERN"]

# One file per session, named by its UTC time: the newest is the last by name, whatever the
# mtimes (a CI cache restores files with the restore's time).
PATTERN = "pagezero-*.json"
_STAMP = "%Y%m%dT%H%M%S%fZ"


def load_baseline(state: PluginState) -> None:
    """Read --pagezero-compare's file (or the newest in its folder) into `state`."""
    path = state.compare
    assert path is not None
    if os.path.isdir(path) or not os.path.exists(path):
        found = glob.glob(os.path.join(glob.escape(path), PATTERN))
        if not found:
            state.baseline_missing = f"no saved session ({PATTERN}) in {path}: nothing compared"
            return
        path = max(found)  # the newest by the time in its name
    try:
        state.baseline = ResultSet.load(path)
    except (OSError, ValueError) as e:
        raise pytest.UsageError(f"--pagezero-compare: {e}") from None
    state.baseline_name = os.path.basename(path)


def save_session(state: PluginState) -> None:
    """Write the session's results to a new timestamped file in --pagezero-save's folder."""
    assert state.save_dir is not None
    os.makedirs(state.save_dir, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime(_STAMP)
    path = os.path.join(state.save_dir, f"pagezero-{stamp}.json")
    ResultSet(state.results, state.runs).save(path)
    state.saved_to = path


def _of_tests(
    results: Iterable[Result], runs: Iterable[Mapping[str, Any]], nodes: Any, machine: Any = None
) -> ResultSet:
    kept = [(r, run) for r, run in zip(results, runs) if r.params.get(TEST_PARAM) in nodes]
    return ResultSet([r for r, _ in kept], [run for _, run in kept], machine)


def _rows(state: PluginState, nodes: Any) -> tuple[list[dict[str, Any]], ResultSet]:
    """compare()'s rows for the baseline points of `nodes` (empty: none), and the new side."""
    assert state.baseline is not None
    new = _of_tests(state.results, state.runs, nodes)
    base = _of_tests(state.baseline, state.baseline.runs, nodes, state.baseline.machine)
    threshold = state.threshold_pct / 100
    if len(base):
        with contextlib.suppress(ValueError):  # no point in common
            return comparison.compare(base, new, threshold=threshold, alpha=state.alpha), new
    return [], new


def _regression_line(row: Mapping[str, Any]) -> str:
    c = row["changes"][0]
    (low, high), (base, new) = c["ci_pct"], c["runs"]
    line = f"  {row['label']}: {c['change_pct']:+.1f}% {c['marker']}, p={c['p_value']:.2g}, "
    return line + f"interval [{low:+.1f}%, {high:+.1f}%], runs {base} vs {new}"


def judge(state: PluginState, nodeid: str) -> str | None:
    """Why the test `nodeid` fails on its comparison (kept in state.failed), or None."""
    if state.baseline is None:
        return None
    rows, new = _rows(state, {nodeid})
    if not rows:
        return None
    compared = [row for row in rows if row["changes"][0] is not None]
    foreign = comparison.machine_differences(state.baseline.machine, new.machine)
    reason = None
    if foreign and compared and state.same_machine == "strict":
        reason = (
            f"pagezero: compared with {state.baseline_name}, measured on another machine "
            f"({'; '.join(foreign)}), and --pagezero-same-machine=strict"
        )
    elif not foreign and state.fail_pct is not None:
        worse = [r for r in compared if r["changes"][0]["marker"] == REGRESSION]
        if worse:
            head = f"pagezero: regression beyond {state.fail_pct:g}% and significant against "
            head += f"{state.baseline_name} ({METHOD}, alpha {state.alpha:g}):"
            reason = "\n".join([head, *map(_regression_line, worse)])
    if reason is not None:
        state.failed[nodeid] = reason
    return reason


def _without_baseline(state: PluginState, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The session's points (as labels) that the baseline lacks, by test."""
    assert state.baseline is not None
    known = {point_key(r) for r in state.baseline}
    shown = {row["label"] for row in rows}
    labels = dict.fromkeys(r.label() for r in state.results if point_key(r) not in known)
    return [f"no baseline point, not compared: {label}" for label in labels if label not in shown]


def summary_lines(state: PluginState) -> list[str]:
    """The terminal summary: the comparison, the notes, the failures, the saved file."""
    lines: list[str] = []
    if state.baseline_missing:
        lines.append(state.baseline_missing)
    if state.baseline is not None and state.results:
        rows, new = _rows(state, state.nodes)
        if rows:
            names = [state.baseline_name, "this session"]
            method = f"{METHOD}, alpha {state.alpha:g}, threshold {state.threshold_pct:g}%"
            machines = [dict(state.baseline.machine), dict(new.machine)]
            lines += comparison.header_lines(
                machines, names, comparison.runs_per_side(rows, 2), method
            )
            lines.append(comparison.format_table(rows, names))
            foreign = comparison.machine_differences(state.baseline.machine, new.machine)
            if foreign and state.same_machine != "strict":
                lines.append(
                    "note: the baseline is from another machine: compared, but no test fails "
                    "on it (--pagezero-same-machine=strict fails them)"
                )
        lines += _without_baseline(state, rows)
    elif state.baseline is not None:
        lines.append(f"compared with {state.baseline_name}: no test measured with pagezero_bench")
    if state.failed:
        lines.append(f"{len(state.failed)} failed on the comparison: {', '.join(state.failed)}")
    if state.saved_to:
        tests = f"{len(state.results)} results of {len(state.nodes)} tests"
        lines.append(f"saved {tests} to {state.saved_to}")
    elif state.save_dir is not None and not state.results:
        lines.append(f"nothing measured: no file saved to {state.save_dir}")
    return lines
