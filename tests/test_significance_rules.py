"""significance.compare_runs() checked figure by figure against a second route: the
change from medians worked out by hand, the p value and interval from scipy's own
Welch test (scipy.stats.ttest_ind with equal_var=False) on the logs of the per-run
medians, and the marker's rules at their edges."""

import math

import pytest
from scipy import stats as sps

from pagezero.analysis.significance import MIN_RUNS, compare_runs

# Per-run medians 100, 101, 99 (median 100) and 110, 111, 109.5 (median 110).
BASE = [[99, 100, 101], [101], [97, 99, 100]]
NEW = [[110], [111, 112, 110], [108, 109, 110, 111]]
BASE_MEDIANS, NEW_MEDIANS = [100, 101, 99], [110, 111, 109.5]


def test_the_change_is_of_the_median_of_per_run_medians():
    c = compare_runs(BASE, NEW)
    assert c["change_pct"] == pytest.approx(10.0)
    assert c["runs"] == [3, 3]


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.2])
def test_p_and_interval_are_welchs_on_the_logs(alpha):
    c = compare_runs(BASE, NEW, alpha=alpha)
    logs_new = [math.log(m) for m in NEW_MEDIANS]
    logs_base = [math.log(m) for m in BASE_MEDIANS]
    ref = sps.ttest_ind(logs_new, logs_base, equal_var=False)
    ci = ref.confidence_interval(1 - alpha)
    assert c["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert c["ci_pct"] == pytest.approx(
        [100 * math.expm1(ci.low), 100 * math.expm1(ci.high)], rel=1e-9
    )


def test_markers_need_both_the_threshold_and_the_level():
    # p is about 0.0003 here (scipy): significant at 0.01, and the change is 10%.
    assert compare_runs(BASE, NEW)["marker"] == "(I)"
    assert compare_runs(NEW, BASE)["marker"] == "(R)"
    assert compare_runs(BASE, NEW, unit="cycles/byte")["marker"] == "(R)"
    assert compare_runs(NEW, BASE, unit="cycles/byte")["marker"] == "(I)"
    # Not significant at a level below its p: beyond the threshold only.
    assert compare_runs(BASE, NEW, alpha=0.0001)["marker"] == "~"
    # A change of exactly the threshold is not beyond it.
    assert compare_runs(BASE, NEW, threshold=0.1)["marker"] == ""
    assert compare_runs(BASE, NEW, threshold=0.0999)["marker"] == "(I)"


def test_runs_without_loops_are_left_out():
    c = compare_runs(BASE + [[]], [[]] + NEW)
    assert c["runs"] == [3, 3]
    assert c["change_pct"] == pytest.approx(10.0)


def test_below_three_runs_there_is_no_test_and_a_note():
    c = compare_runs(BASE[:2], NEW)
    assert (c["p_value"], c["ci_pct"]) == (None, None)
    assert c["marker"] == "?"
    assert c["note"] == (
        "2 vs 3 runs: the variation between runs is unknown; "
        f"measure with --runs {MIN_RUNS} or more on each side"
    )
    # Within the threshold: no marker, the note all the same.
    same = compare_runs([[100]] * 2, [[101]] * 3)
    assert same["marker"] == "" and same["note"].startswith("2 vs 3 runs")


def test_runs_that_agree_exactly_give_a_certain_answer():
    c = compare_runs([[100]] * 3, [[110]] * 3)
    assert c["p_value"] == 0.0
    assert c["ci_pct"] == pytest.approx([10.0, 10.0])
    assert c["marker"] == "(I)"
    same = compare_runs([[100]] * 3, [[100]] * 4)
    assert (same["p_value"], same["marker"], same["note"]) == (1.0, "", None)


def test_a_median_of_zero_gets_no_test():
    c = compare_runs([[0.0]] * 3, [[5.0]] * 3)
    assert c["change_pct"] == math.inf
    assert c["marker"] == "?" and c["p_value"] is None
    assert c["note"] == "a run's median is not a positive finite number: no test"
    within = compare_runs([[1.0], [0.0], [1.0]], [[1.0]] * 3)
    assert within["marker"] == "" and within["note"].startswith("a run's median")


@pytest.mark.parametrize(
    "kw",
    [
        {"alpha": 0.0},
        {"alpha": 1.0},
        {"alpha": -0.5},
        {"threshold": -0.01},
        {"threshold": math.nan},
    ],
)
def test_bad_alpha_or_threshold(kw):
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\) and threshold non-negative$"):
        compare_runs(BASE, NEW, **kw)


def test_a_zero_threshold_marks_any_significant_change():
    assert compare_runs(BASE, NEW, threshold=0.0)["marker"] == "(I)"


@pytest.mark.parametrize("base, new", [([], NEW), (BASE, [[], []])])
def test_a_side_without_a_run(base, new):
    with pytest.raises(ValueError, match="^both sides need at least one run$"):
        compare_runs(base, new)


def test_a_p_value_equal_to_alpha_is_not_significant():
    p = compare_runs(BASE, NEW, alpha=0.5)["p_value"]
    assert compare_runs(BASE, NEW, alpha=p)["marker"] == "~"
    assert compare_runs(BASE, NEW, alpha=p * 1.000001)["marker"] == "(I)"
