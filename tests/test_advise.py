"""pagezero advise: the analysis on made-up data, and the shape of a real quick sweep."""

import dataclasses
import functools
import json
import signal

import pytest
from conftest import ok
from helpers.cli import run_cli

import pagezero
import pagezero.analysis.cache as analysis_cache
from pagezero.analysis.knee import KNEE_MIN_EXTENT, find_knee, is_clear_step
from pagezero.cli import main
from pagezero.interrupt import Interrupted
from pagezero.measure.policy import default_kernel
from pagezero.runs import sweeps
from pagezero.studies.advise import study as advise_study
from pagezero.studies.advise.study import SWEEPS, cells_from_results

KB, MB = 1 << 10, 1 << 20
GBPS = 1e9


# find_knee ----------------------------------------------------------------------


def test_knee_is_the_first_extent_of_the_upper_level():
    pts = [
        (64 * KB, 30),
        (1 * MB, 31),
        (8 * MB, 29),
        (16 * MB, 30),
        (32 * MB, 60),
        (64 * MB, 62),
        (128 * MB, 61),
    ]
    knee, step = find_knee(pts)
    assert knee == 32 * MB
    assert step == pytest.approx(61 / 30, rel=0.05)


@pytest.mark.parametrize("noise", [(4 * MB, 70), (8 * MB, 12), (128 * MB, 140), (256 * MB, 45)])
def test_one_noisy_point_does_not_move_the_knee(noise):
    pts = dict(
        [
            (64 * KB, 30),
            (1 * MB, 31),
            (4 * MB, 30),
            (8 * MB, 29),
            (16 * MB, 30),
            (32 * MB, 60),
            (64 * MB, 58),
            (128 * MB, 61),
            (256 * MB, 62),
        ]
    )
    pts[noise[0]] = noise[1]
    assert find_knee(pts.items())[0] == 32 * MB


def test_a_falling_curve_reports_its_drop_as_a_step_below_one():
    # Rates that fall by half from 8MB: the best one-step fit splits there,
    # and the step (upper level / lower level) says the level fell.
    pts = [(64 * KB, 60), (1 * MB, 61), (4 * MB, 59), (8 * MB, 30), (32 * MB, 31), (64 * MB, 29)]
    knee, step = find_knee(pts)
    assert knee == 8 * MB
    assert step == pytest.approx(0.5, rel=0.02)


def test_small_extents_do_not_make_a_knee():
    # Per-call overhead makes 4KB slow; that is not the cache knee.
    pts = [(4 * KB, 5), (64 * KB, 30), (1 * MB, 30), (32 * MB, 31), (64 * MB, 30)]
    knee, step = find_knee(pts)
    assert knee >= 64 * KB and step < 1.3


def test_a_flat_curve_has_a_step_of_about_one():
    # No level change at all: whichever split fits best, the step is the
    # ratio of two medians of the same level, and the knee a measured extent.
    extents = [64 * KB, 1 * MB, 4 * MB, 8 * MB, 16 * MB, 32 * MB, 64 * MB]
    rates = [30.0, 30.3, 29.8, 30.1, 29.9, 30.2, 30.0]
    knee, step = find_knee(zip(extents, rates))
    assert knee in extents
    assert step == pytest.approx(1.0, abs=0.02)


def test_knee_needs_two_extents():
    with pytest.raises(ValueError, match="two extents"):
        find_knee([(4 * KB, 10), (MB, 10)])


# cells_from_results -----------------------------------------------------------------


class _Visit:
    """One visit of a cell, as a BatchResult shows it to cells_from_results."""

    def __init__(self, typical, rate=10.0, worst=None, kernel="x86-64-stosb", batch=32 * MB):
        self.function, self.batch_bytes = kernel, batch
        self.typical_worst_ms, self.worst_ms = typical, typical if worst is None else worst
        self._rate = rate

    def values(self):
        return (self._rate, self._rate)


def test_a_cells_p90_worst_is_over_every_visit_of_every_run():
    # Two runs of five visits, typical worsts 1..10 ms: the 90th percentile of
    # the ten, interpolated, is 9 + 0.1 * (10 - 9) = 9.1 ms; the typical worst
    # is the median over runs of each run's median (3 and 8): 5.5 ms.
    visits = [_Visit(float(t), worst=20.0 if t == 10 else None) for t in range(1, 11)]
    runs = [{"process": 0}] * 5 + [{"process": 1}] * 5
    [cell] = cells_from_results(visits, runs).values()
    assert cell["p90_worst_ms"] == pytest.approx(9.1)
    assert cell["typical_worst_ms"] == pytest.approx(5.5)
    assert cell["max_worst_ms"] == 20.0
    assert cell["run_medians"] == {0: 10.0, 1: 10.0}


def test_one_visit_is_its_own_p90():
    [cell] = cells_from_results([_Visit(2.5)], [{"process": 0}]).values()
    assert cell["p90_worst_ms"] == cell["typical_worst_ms"] == 2.5


# A real quick sweep ----------------------------------------------------------------


@pytest.fixture(scope="module")
def quick():
    return pagezero.advise(quick=True, budgets_ms=(1, 3, 0.5))


def sweep_line(advice):
    """The text's line on the sweep (how many kernels, extents, runs), after the answers."""
    [line] = [x for x in advice.describe() if x.startswith("From a sweep of ")]
    return line


BEST_KEYS = {"min_bytes", "max_bytes", "kernel", "bytes_per_sec"}
BATCH_KEYS = {"budget_ms", "batch_bytes", "kernel", "bytes_per_sec", "worst_ms"}


def test_json_keeps_the_documented_keys_and_adds_ties_runs_and_backing(quick):
    doc = quick.to_json()
    assert set(doc) == {
        "knee_bytes",
        "knee_step",
        "knee_split_bytes",
        "knee_extents",
        "cache",
        "llc_bytes",
        "best_kernel",
        "batch",
        "clear_pages_batch",
        "knee_tied",
        "runs",
        "backing",
    }
    assert type(doc["knee_split_bytes"]) is int and type(doc["llc_bytes"]) is int
    # A knee only where the step is clear: null otherwise, one definition with the text.
    clear = is_clear_step(doc["knee_step"])
    assert doc["knee_bytes"] == (doc["knee_split_bytes"] if clear else None)
    assert doc["knee_extents"] == [e for e in quick.extents if e >= KNEE_MIN_EXTENT]
    assert doc["runs"] == 1 and doc["backing"] == quick.backing
    assert all(type(e) is int for e in doc["knee_tied"])
    assert doc["best_kernel"]
    for row in doc["best_kernel"]:
        assert set(row) == BEST_KEYS | {"tied", "pooled"}
        assert type(row["pooled"]) is bool
        assert type(row["min_bytes"]) is int and type(row["max_bytes"]) is int
        assert type(row["kernel"]) is str and type(row["bytes_per_sec"]) is float
        assert row["kernel"] not in row["tied"]
    assert [r["budget_ms"] for r in doc["batch"]] == [1.0, 3.0, 0.5]
    # clear_pages()'s own kernel, per budget, in the same shape.
    assert [r["budget_ms"] for r in doc["clear_pages_batch"]] == [1.0, 3.0, 0.5]
    assert {r["kernel"] for r in doc["clear_pages_batch"]} == {quick.knee_kernel}
    assert {t["kernel"] for r in doc["clear_pages_batch"] for t in r["tied"]} <= {quick.knee_kernel}
    for row in doc["batch"] + doc["clear_pages_batch"]:
        assert set(row) == BATCH_KEYS | {
            "typical_worst_ms",
            "p90_worst_ms",
            "max_worst_ms",
            "checked_against",
            "fits",
            "spread_pct",
            "tied",
        }
        assert type(row["budget_ms"]) is float and type(row["batch_bytes"]) is int
        assert type(row["kernel"]) is str
        assert type(row["bytes_per_sec"]) is float and type(row["worst_ms"]) is float
        # worst_ms is the typical worst under its old name; the budget was
        # checked against the worst of 9 visits in 10, and the row says so.
        assert row["checked_against"] == "p90_worst_ms"
        assert row["worst_ms"] == row["typical_worst_ms"] <= row["max_worst_ms"]
        assert row["p90_worst_ms"] <= row["max_worst_ms"]
        for t in row["tied"]:
            assert set(t) == {"batch_bytes", "kernel", "bytes_per_sec"}
            assert (t["kernel"], t["batch_bytes"]) in quick.cells


def test_quick_is_one_run_and_says_so(quick):
    assert quick.runs == 1
    assert all(c["runs"] == 1 and c["spread_of"] == "loops" for c in quick.cells.values())
    assert "1 run of 2 passes (--quick" in sweep_line(quick)


def test_the_backing_is_the_results_and_is_printed(quick):
    assert quick.backing in ("2MB hugetlb", "2MB THP", "4KB")
    assert f"region on {quick.backing} pages" in sweep_line(quick)


def test_knee_lies_within_the_measured_extents(quick):
    assert quick.extents == SWEEPS["quick"]["extents"]
    assert quick.knee_bytes is None or quick.knee_bytes in quick.extents
    assert set(quick.knee_tied) <= set(quick.extents) - {quick.knee_bytes}


@pytest.mark.parametrize(
    "planted, words",
    [
        (8 * MB, "the LLC is 8MB (sysfs)"),
        (48 * MB, "the LLC is 48MB (sysfs)"),
        (None, "the LLC size is unknown (sysfs gives none)"),
    ],
)
def test_llc_comes_from_sysinfo_and_is_printed(monkeypatch, planted, words):
    # A planted size, not the same llc_bytes() call advise makes: the advice
    # must carry what sysinfo reports (0 when it knows none) and say it.
    monkeypatch.setattr(analysis_cache, "llc_bytes", lambda info=None: planted)
    advice = pagezero.advise(quick=True, budgets_ms=(1,))
    assert advice.llc_bytes == (planted or 0) and advice.to_json()["llc_bytes"] == (planted or 0)
    text = "\n".join(advice.describe())
    assert words in text
    if planted == 8 * MB:
        # The quick extents from 8MB on (8MB, 32MB) are one range, judged as one.
        assert (advice.best_kernel[-1]["min_bytes"], advice.best_kernel[-1]["max_bytes"]) == (
            8 * MB,
            32 * MB,
        )
        assert advice.best_kernel[-1]["pooled"] is True
        assert "judged as one range" in text and "from the cache's size on" in text
    elif planted == 48 * MB:
        # No quick extent reaches 48MB: every extent is judged alone.
        assert not any(r["pooled"] for r in advice.best_kernel)
        assert "judged as one range" not in text


def test_the_streaming_range_starts_at_the_llc_else_at_a_clear_knee():
    from_ = advise_study._streaming_from
    assert from_(16 * MB, 32 * MB, 2.0) == 16 * MB  # the LLC, known, wins
    assert from_(0, 32 * MB, 2.0) == 32 * MB  # no LLC: a clear knee
    assert from_(0, 32 * MB, 1.01) is None  # neither: every extent alone


def test_best_kernel_ranges_cover_the_extents_in_order(quick):
    rows = quick.best_kernel
    assert rows[0]["min_bytes"] == quick.extents[0]
    assert rows[-1]["max_bytes"] == quick.extents[-1]
    available = {k.name for k in pagezero.kernels() if k.available}
    for a, b in zip(rows, rows[1:]):
        assert quick.extents.index(b["min_bytes"]) == quick.extents.index(a["max_bytes"]) + 1
    assert {r["kernel"] for r in rows} <= available


def test_batches_are_measured_cells(quick):
    for row, fits in zip(quick.batch, quick.batch_fits):
        assert row["batch_bytes"] in quick.extents
        cell = quick.cells[(row["kernel"], row["batch_bytes"])]
        assert cell["typical_worst_ms"] == row["typical_worst_ms"]
        assert cell["p90_worst_ms"] == row["p90_worst_ms"]
        assert cell["max_worst_ms"] == row["max_worst_ms"]
        # Fits: the p90 worst with the 5% floor added within the budget.
        assert fits == row["fits"] == (row["p90_worst_ms"] * 1.05 <= row["budget_ms"])


def test_words_name_the_knee_the_budgets_the_ties_and_what_was_checked(quick):
    lines = quick.describe()
    text = "\n".join(lines)
    assert "Knee" in text and quick.knee_kernel in text
    assert pagezero.format_size(quick.llc_bytes) in text
    # The answers come first, one line per budget, in the budgets' order.
    answers = [line for line in lines if " ms -> " in line]
    assert [a.split(" ms -> ")[0].strip() for a in answers] == ["1", "3", "0.5"]
    assert lines.index(answers[0]) == 1
    for row, answer in zip(quick.batch, answers):
        assert f"worst batch {row['p90_worst_ms']:.2f} ms" in answer
        assert (f"tied with {len(row['tied'])} other" in answer) == bool(row["tied"])
        assert ("chosen by" in answer) == bool(row["tied"])
    for row in quick.best_kernel:
        if row["tied"]:
            assert f"(tied: {', '.join(row['tied'])})" in text
    # The method only with explain, after the answers.
    assert "by the worst batch" not in text and "--explain says how" in text
    explained = quick.describe(explain=True)
    assert explained[: len(lines) - 1] == lines[:-1]
    method = "\n".join(explained[len(lines) :])
    assert "worst batch of 9 visits in 10" in method and "max:" in method
    for row in quick.batch:
        assert f"worst batch p90 {row['p90_worst_ms']:.2f} ms" in method
        assert f"typical {row['typical_worst_ms']:.2f} ms" in method


@pytest.mark.parametrize("budgets", [(), (0,), (-1,), ("1",), (float("nan"),), (True,)])
def test_bad_budgets(budgets):
    with pytest.raises(ValueError, match="budget"):
        pagezero.advise(quick=True, budgets_ms=budgets)


@pytest.mark.parametrize("runs", [0, 2, 1.5, True])
def test_the_full_sweep_needs_three_runs(runs):
    with pytest.raises(ValueError, match="runs"):
        pagezero.advise(runs=runs)


def test_runs_are_fresh_processes_and_recorded():
    advice = pagezero.advise(quick=True, runs=2, budgets_ms=(1,))
    assert advice.runs == 2 and advice.to_json()["runs"] == 2
    assert all(c["runs"] == 2 and c["spread_of"] == "runs" for c in advice.cells.values())
    assert "2 runs (fresh processes) of 2 passes each" in sweep_line(advice)


def test_each_run_visits_every_cell_once_per_round_in_a_new_order(monkeypatch):
    """Rounds interleave the cells: a run's first round visits every cell before any
    cell's second visit, and the rounds' orders are shuffled anew."""
    monkeypatch.setitem(SWEEPS, "quick", {**SWEEPS["quick"], "rounds": 2})
    seen = {}
    analyse = advise_study._analyse

    def keep(rs, *args, **kwargs):
        seen["rs"] = rs
        return analyse(rs, *args, **kwargs)

    monkeypatch.setattr(advise_study, "_analyse", keep)
    advice = pagezero.advise(quick=True, runs=2, budgets_ms=(1,))
    assert advice.passes == 4 and advice.rounds == 2
    assert "2 runs (fresh processes) of 4 passes each in 2 shuffled rounds" in sweep_line(advice)
    rs = seen["rs"]
    by_process = {}
    for result, run in zip(rs.results, rs.runs):
        by_process.setdefault(run["process"], []).append((result.function, result.batch_bytes))
    assert sorted(by_process) == [0, 1]
    n_cells = len(advice.cells)
    for visits in by_process.values():
        assert len(visits) == 2 * n_cells
        first, second = visits[:n_cells], visits[n_cells:]
        assert set(first) == set(second) == set(advice.cells)
    assert any(v[:n_cells] != v[n_cells:] for v in by_process.values())


# A signal in the middle of the sweep ---------------------------------------------


def _stop_when(monkeypatch, knee_extents, sig=signal.SIGTERM, partial=True):
    """Make the quick sweep's batch runs stop with `sig` once clear_pages()'s
    kernel has measured `knee_extents` extents, carrying that run's passes
    when `partial` (as the C loops do). Returns the calls seen."""
    real = sweeps.BENCHMARKS["advise-cell"]
    seen = []

    @functools.wraps(real.run)  # the sweep reads the parameters off its signature
    def run(**params):
        r = real.run(**params)
        seen.append(params)
        if sum(p["kernel"] == default_kernel() for p in seen) == knee_extents:
            raise Interrupted(sig, partial=r if partial else None)
        return r

    monkeypatch.setitem(sweeps.BENCHMARKS, "advise-cell", dataclasses.replace(real, run=run))
    return seen


def test_an_interrupted_sweep_advises_from_the_cells_measured(monkeypatch):
    seen = _stop_when(monkeypatch, 2)
    with pytest.raises(Interrupted) as e:
        pagezero.advise(quick=True)
    advice = e.value.partial
    assert e.value.signum == signal.SIGTERM
    # The cells done before and the one the signal cut short, no more.
    assert len(advice.cells) == len(seen)
    assert advice.interrupted == "SIGTERM" and advice.to_json()["interrupted"] == "SIGTERM"
    assert advice.knee_bytes is None or advice.knee_bytes in advice.extents
    assert advice.describe()[0].startswith("Interrupted by SIGTERM")


def test_a_sweep_stopped_before_two_extents_has_no_advice(monkeypatch):
    _stop_when(monkeypatch, 1, partial=False)
    with pytest.raises(Interrupted) as e:
        pagezero.advise(quick=True)
    assert e.value.partial is None


def test_cli_advise_saves_the_partial_advice(monkeypatch, tmp_path, capsys):
    _stop_when(monkeypatch, 2, sig=signal.SIGHUP)
    out = tmp_path / "advice.json"
    assert main(["advise", "--quick", "-o", str(out)]) == 129
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"pagezero: interrupted by SIGHUP; the partial advice is in {out}"
    assert json.loads(out.read_text())["interrupted"] == "SIGHUP"


def test_cli_quick_says_one_run(capsys):
    assert main(["advise", "--quick", "--budget", "2"]) == 0
    out = capsys.readouterr().out
    assert "1 run of 2 passes (--quick" in out and "\n  2 ms -> " in out
    assert main(["advise", "--quick", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 1


def test_cli_explain_gives_the_method_after_the_answers():
    plain = ok(run_cli("advise", "--quick")).splitlines()
    explained = ok(run_cli("advise", "--quick", "--explain")).splitlines()
    for lines in (plain, explained):
        assert lines[0].startswith("Per latency budget, the batch for clear_pages()")
        assert lines[1].startswith("  1 ms -> ")
    [sweep] = [i for i, x in enumerate(explained) if x.startswith("From a sweep of ")]
    assert not any(x.startswith(("Ties: ", "Budgets: ")) for x in plain)
    assert plain[-1].endswith("; --explain says how they were judged and chosen.")
    method = explained[sweep + 1 :]
    assert any(x.startswith("Ties: ") for x in method)
    assert any(x.startswith("Budgets: ") for x in method)


def test_the_help_gives_the_runs_and_budgets_the_code_uses():
    # It said 3 runs while the sweep made 5.
    text = " ".join(ok(run_cli("advise", "--help")).split())
    assert f"the full sweep makes {SWEEPS['default']['runs']} runs" in text
    budgets = " and ".join(f"{b:g}" for b in advise_study.DEFAULT_BUDGETS_MS)
    assert f"(default: {budgets})" in text
    assert "--explain" in text
