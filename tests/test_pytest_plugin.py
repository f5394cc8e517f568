"""The pytest plugin's fixture, save and compare, run as a CI runs them.

Real measurements run in a pytest subprocess (runpytest_subprocess): the
plugin is then loaded through its pytest11 entry point as in a user's CI,
and the measuring code's worker processes and signal handlers belong to
that process, not to this one. The decisions are tested in-process
(runpytest_inprocess) with pagezero.memset replaced by a replay of fixed
runs: monkeypatch reaches only this process, and a planted change is then
exactly the planted one, whatever this busy machine's noise.
"""

import glob
import json
import os

import pytest

# The comparison's Welch test imports scipy, hence numpy, on first use. An
# in-process pytester run gives sys.modules back as it found it afterwards,
# and numpy's extension cannot be loaded twice in one process: imported here,
# before any such run, it stays loaded.
import scipy.stats  # noqa: F401

import pagezero
from pagezero.pytest_plugin.baseline import PATTERN
from pagezero.results.result import Result
from pagezero.results.resultset import ResultSet

pytest_plugins = ["pytester"]

REAL_TESTS = """
import pagezero

def test_clear(pagezero_bench):
    rs = pagezero_bench.memset(size="256KB", loops=3)
    assert isinstance(rs, pagezero.ResultSet) and len(rs) == 3

def test_every_method(pagezero_bench):
    assert isinstance(pagezero_bench.mmap(size="256KB", loops=1, runs=1), pagezero.ResultSet)
    pagezero_bench.batch(size="1MB", batch="256KB", loops=1, runs=1)
    pagezero_bench.folio(size="64KB", loops=1, runs=1)

def test_plain():
    pass
"""


def saved_files(folder):
    return sorted(glob.glob(os.path.join(str(folder), PATTERN)))


def test_the_fixture_records_every_result_and_a_second_session_compares_clean(pytester):
    # One real session, then a second of the same code comparing against it: each
    # session measures for seconds, so the second builds on the first's file.
    pytester.makepyfile(test_ci=REAL_TESTS)
    result = pytester.runpytest_subprocess("--pagezero-save=saved")
    result.assert_outcomes(passed=3)
    [path] = saved_files(pytester.path / "saved")
    result.stdout.fnmatch_lines([f"saved 6 results of 2 tests to {os.path.join('saved', '*')}"])
    rs = ResultSet.load(path)
    tests = [r.params["test"] for r in rs]
    assert tests == ["test_ci.py::test_clear"] * 3 + ["test_ci.py::test_every_method"] * 3
    assert [r.benchmark for r in rs][3:] == ["mmap", "batch", "folio"]
    # Every run a process of its own: the memset's three, then one per call.
    assert [run["process"] for run in rs.runs] == [0, 1, 2, 3, 4, 5]
    assert rs.machine["cpu_model"] == pagezero.machine()["cpu_model"]

    # Two real sessions of one machine do not fail: the noise between them, measured
    # honestly: a 5% limit on a significant regression, and 3 runs a side, must not
    # fail identical code.
    result = pytester.runpytest_subprocess(
        "--pagezero-save=saved", "--pagezero-compare=saved", "--pagezero-compare-fail=5"
    )
    result.assert_outcomes(passed=3)
    first, second = saved_files(pytester.path / "saved")
    assert first == path
    result.stdout.fnmatch_lines(
        [
            "side * runs",
            f"{os.path.basename(first)} * 1-3",
            "this session * 1-3",
            "method: Welch's t-test on the logs of per-run medians, alpha 0.01, threshold 5%",
            "benchmark * | result class | pagezero-* | this session",
            "memset default * test=test_ci.py::test_clear * | bytes/sec *",
        ]
    )
    assert "failed on the comparison" not in result.stdout.str()


# Replayed runs ----------------------------------------------------------------

# Three runs of 256KB whose medians differ by a few percent, as runs do.
RUN_TICKS = ([2000, 2010, 1990], [2060, 2070, 2050], [1950, 1940, 1960])


def replay(size="256KB", loops=3, runs=3, **_):
    machine = pagezero.machine()
    nbytes = pagezero.parse_size(size)
    params = {"size": nbytes, "loops": loops}  # as the API records them: sizes in bytes
    results = [
        Result("memset", "x86-64-stosb", params, nbytes, "ns", ticks, None, machine)
        for ticks in RUN_TICKS
    ]
    return ResultSet(results, [{"process": i} for i in range(len(results))])


REPLAYED_TEST = """
def test_clear(pagezero_bench):
    pagezero_bench.memset(size="256KB", loops=3)
"""


@pytest.fixture
def replayed(pytester, monkeypatch):
    """pytester, with pagezero.memset replaying RUN_TICKS and one saved session of it."""
    monkeypatch.setattr(pagezero, "memset", replay)
    pytester.makepyfile(test_ci=REPLAYED_TEST)
    pytester.runpytest_inprocess("--pagezero-save=saved").assert_outcomes(passed=1)
    return pytester


def plant(pytester, scale=1.0, cpu_model=None, name="pagezero-29990101T000000000000Z.json"):
    """A baseline beside the saved session, newer by name: its loop times scaled
    by `scale` (0.8: the baseline is 1/0.8 as fast, so this session is 20% slower)."""
    [path] = saved_files(pytester.path / "saved")
    with open(path) as f:
        doc = json.load(f)
    for r in doc["results"]:
        r["samples"] = [round(s * scale) for s in r["samples"]]
    if cpu_model:
        doc["machine"]["cpu_model"] = cpu_model
    with open(pytester.path / "saved" / name, "w") as f:
        json.dump(doc, f)
    return name


def test_a_planted_20pct_regression_fails_the_test(replayed):
    name = plant(replayed, scale=0.8)
    result = replayed.runpytest_inprocess("--pagezero-compare=saved", "--pagezero-compare-fail=5")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*pagezero: regression beyond 5% and significant against " + name + "*",
            "*memset x86-64-stosb size=256KB test=test_ci.py::test_clear: -20.0% (R), p=*",
            "memset x86-64-stosb size=256KB test=test_ci.py::test_clear | bytes/sec *| -20.0% (R)",
            "1 failed on the comparison: test_ci.py::test_clear",
        ]
    )


def test_a_planted_1pct_change_passes(replayed):
    plant(replayed, scale=0.99)
    result = replayed.runpytest_inprocess("--pagezero-compare=saved", "--pagezero-compare-fail=5")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["memset x86-64-stosb * | bytes/sec *| -1.0%"])


def test_without_compare_fail_a_regression_is_shown_not_failed(replayed):
    plant(replayed, scale=0.8)
    result = replayed.runpytest_inprocess("--pagezero-compare=saved")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["method: * threshold 2%", "memset * |*| -20.0% (R)"])


def test_a_test_without_baseline_point_passes_with_a_note(replayed):
    replayed.makepyfile(
        test_ci=REPLAYED_TEST + "\n\ndef test_new(pagezero_bench):\n"
        "    pagezero_bench.memset(size='256KB', loops=3)\n"
    )
    plant(replayed, scale=0.8)
    result = replayed.runpytest_inprocess("--pagezero-compare=saved", "--pagezero-compare-fail=5")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["no baseline point, not compared: memset * test=test_ci.py::test_new"]
    )


@pytest.mark.parametrize("where", ["empty", "missing"])
def test_no_saved_session_compares_nothing_and_passes(replayed, where):
    (replayed.path / "empty").mkdir()
    result = replayed.runpytest_inprocess(
        f"--pagezero-compare={where}", "--pagezero-compare-fail=5"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [f"no saved session (pagezero-*.json) in {where}: nothing compared"]
    )


def test_a_baseline_of_another_machine_is_compared_but_never_fails(replayed):
    plant(replayed, scale=0.8, cpu_model="Another CPU")
    result = replayed.runpytest_inprocess("--pagezero-compare=saved", "--pagezero-compare-fail=5")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "warning: * and this session were not measured on the same machine: "
            "CPU model (Another CPU vs *)",
            "memset * |*| -20.0% (R)",
            "note: the baseline is from another machine: compared, but no test fails on it*",
        ]
    )


def test_strict_fails_a_test_compared_with_another_machine(replayed):
    plant(replayed, scale=1.0, cpu_model="Another CPU")
    result = replayed.runpytest_inprocess(
        "--pagezero-compare=saved", "--pagezero-same-machine=strict"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*measured on another machine (CPU model (Another CPU vs *)), and "
            "--pagezero-same-machine=strict*"
        ]
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pagezero-compare-fail=5"], "*--pagezero-compare-fail needs --pagezero-compare*"),
        (["--pagezero-compare=x", "--pagezero-compare-fail=abc"], "*'abc' is not a percentage*"),
        (["--pagezero-compare=test_ci.py"], "*--pagezero-compare: *test_ci.py*"),
        (["--pagezero-compare=x", "--pagezero-alpha=2"], "*--pagezero-alpha must be in (0, 1)*"),
    ],
)
def test_bad_options_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_ci=REPLAYED_TEST)
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
