"""Saving a session's results, and comparing a session with a saved one.

The comparison is `pagezero compare`'s (pagezero.analysis.compare.compare: the run
is the unit, Welch's t-test on the logs of per-run medians), its table
format_table()'s and its header comparison_header's, machine warnings
included: nothing here computes or formats a comparison of its own. What is
added is the decision: a test fails when one of its points is marked a
regression ((R): beyond --pagezero-compare-fail and significant) against a
baseline from the same machine. A baseline from another machine is compared
and shown, but fails nothing unless --pagezero-same-machine=strict: a change
measured across machines is not the change's alone.
"""

from __future__ import annotations

import datetime
import glob
import os
from typing import TYPE_CHECKING, Any

import pytest

from pagezero.analysis.compare import (
    compare,
    format_table,
    header_lines,
    machine_differences,
    runs_per_side,
)
from pagezero.analysis.significance import METHOD, REGRESSION
from pagezero.pytest_plugin.state import TEST_PARAM, PluginState
from pagezero.results.points import point_key
from pagezero.results.resultset import ResultSet

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["load_baseline", "newest", "save_session", "judge", "summary_lines", "PATTERN"]

# One file per session, named by its UTC start to the microsecond: the
# newest of a folder is the last by name, whatever the files' mtimes (a CI
# cache or artifact restores files with the time of the restore).
PATTERN = "pagezero-*.json"
_STAMP = "%Y%m%dT%H%M%S%fZ"

# The new side's name in the table.
SESSION = "this session"


def newest(folder: str) -> str | None:
    """The newest session file (PATTERN) in `folder`, or None when it has none."""
    files = sorted(glob.glob(os.path.join(glob.escape(folder), PATTERN)))
    return files[-1] if files else None


def load_baseline(state: PluginState) -> None:
    """Read --pagezero-compare's file (or the newest in its folder) into `state`.

    A folder that does not exist or holds no session file leaves no baseline
    and a note (a CI's first run, or a cache it did not restore): every test
    then passes as one without a baseline point.

    Raises
    ------
    pytest.UsageError
        A file that is not a pagezero results file, or cannot be read.
    """
    path = state.compare
    assert path is not None
    if os.path.isdir(path) or not os.path.exists(path):
        found = newest(path) if os.path.isdir(path) else None
        if found is None:
            state.baseline_missing = f"no saved session ({PATTERN}) in {path}: nothing compared"
            return
        path = found
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
    ResultSet(state.results, state.runs).save(path)  # atomic: files.atomic_write
    state.saved_to = path


def _of_tests(results: ResultSet, runs: Iterable[Mapping[str, Any]], nodes: Any) -> ResultSet:
    kept = [(r, run) for r, run in zip(results, runs) if r.params.get(TEST_PARAM) in nodes]
    return ResultSet([r for r, _ in kept], [run for _, run in kept], machine=results.machine)


def _session(state: PluginState, nodes: Any) -> ResultSet:
    kept = [(r, run) for r, run in zip(state.results, state.runs) if r.params[TEST_PARAM] in nodes]
    return ResultSet([r for r, _ in kept], [run for _, run in kept])


def _foreign(state: PluginState, new: ResultSet) -> list[str]:
    assert state.baseline is not None
    return machine_differences(state.baseline.machine, new.machine)


def _rows(state: PluginState, nodes: Any) -> tuple[list[dict[str, Any]], ResultSet]:
    """compare()'s rows for the baseline points of `nodes` (empty: none), and the new side."""
    assert state.baseline is not None
    new = _session(state, nodes)
    base = _of_tests(state.baseline, state.baseline.runs, nodes)
    if not len(base):
        return [], new
    try:
        rows = compare(base, new, threshold=state.threshold_pct / 100, alpha=state.alpha)
    except ValueError:  # no point in common
        return [], new
    return rows, new


def _regression_line(row: Mapping[str, Any]) -> str:
    c = row["changes"][0]
    low, high = c["ci_pct"]
    return (
        f"  {row['label']}: {c['change_pct']:+.1f}% {c['marker']}, p={c['p_value']:.2g}, "
        f"interval [{low:+.1f}%, {high:+.1f}%], runs {c['runs'][0]} vs {c['runs'][1]}"
    )


def judge(state: PluginState, nodeid: str) -> str | None:
    """Why the test `nodeid` fails on its comparison, or None when it does not.

    Parameters
    ----------
    state : PluginState
        The session's state, with the baseline and the test's results.
    nodeid : str
        The test that just ran.

    Returns
    -------
    str or None
        The failure's text (it becomes the test's report), recorded in
        state.failed too; None without a baseline point, for a baseline from
        another machine (unless strict), or without --pagezero-compare-fail.
    """
    if state.baseline is None:
        return None
    rows, new = _rows(state, {nodeid})
    if not rows:
        return None
    compared = [row for row in rows if row["changes"][0] is not None]
    foreign = _foreign(state, new)
    reason = None
    if foreign and compared and state.same_machine == "strict":
        reason = (
            f"pagezero: compared with {state.baseline_name}, measured on another machine "
            f"({'; '.join(foreign)}), and --pagezero-same-machine=strict"
        )
    elif not foreign and state.fail_pct is not None:
        worse = [r for r in compared if r["changes"][0]["marker"] == REGRESSION]
        if worse:
            reason = "\n".join(
                [
                    f"pagezero: regression beyond {state.fail_pct:g}% and significant against "
                    f"{state.baseline_name} ({METHOD}, alpha {state.alpha:g}):",
                    *(_regression_line(r) for r in worse),
                ]
            )
    if reason is not None:
        state.failed[nodeid] = reason
    return reason


def _without_baseline(state: PluginState, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The session's points (as labels) that the baseline lacks, by test."""
    assert state.baseline is not None
    known = {point_key(r) for r in state.baseline}
    shown = {row["label"] for row in rows}
    lines: list[str] = []
    for result in state.results:
        label = result.label()
        if point_key(result) not in known and label not in shown:
            shown.add(label)
            lines.append(f"no baseline point, not compared: {label}")
    return lines


def summary_lines(state: PluginState) -> list[str]:
    """The terminal summary: the comparison in `pagezero compare`'s form, the
    notes (points without a baseline, another machine), the failures and the
    saved file."""
    lines: list[str] = []
    if state.baseline_missing:
        lines.append(state.baseline_missing)
    if state.baseline is not None and state.results:
        rows, new = _rows(state, state.nodes)
        if rows:
            names = [state.baseline_name, SESSION]
            method = f"{METHOD}, alpha {state.alpha:g}, threshold {state.threshold_pct:g}%"
            machines = [dict(state.baseline.machine), dict(new.machine)]
            lines += header_lines(machines, names, runs_per_side(rows, 2), method)
            lines.append(format_table(rows, names))
            foreign = _foreign(state, new)
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
        lines.append(
            f"saved {len(state.results)} results of {len(state.nodes)} tests to {state.saved_to}"
        )
    elif state.save_dir is not None and not state.results:
        lines.append(f"nothing measured: no file saved to {state.save_dir}")
    return lines
