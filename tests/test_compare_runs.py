"""compare() with the run as the unit: an A/A simulation (false positives at or
below alpha, where treating loops as samples is far above it), a planted change
found, "?" below 3 runs, the legend, report folders, the header's machine
warning, files saved before runs existed, and --plot's threshold."""

import json
import os
import random
import shutil
import statistics

import pytest

from pagezero.analysis.compare import (
    compare,
    format_table,
    machine_differences,
    runs_per_side,
    side_facts,
)
from pagezero.analysis.significance import compare_runs
from pagezero.cli import main
from pagezero.results.resultset import Result, ResultSet, load_sources

MB = 1 << 20
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FOLDERS = os.path.join(DATA, "compare")


def runs_set(
    rng, rate, runs, loops=10, between=0.04, within=0.01, function="x86-64-stosb", size=256 * MB
):
    """One point measured by `runs` processes: each run has its own offset (the
    physical placement of its buffer, `between` as a fraction) and loop noise."""
    results, described = [], []
    for process in range(runs):
        run_rate = rate * (1 + rng.gauss(0, between))
        ticks = [int(1e9 * size / (run_rate * (1 + rng.gauss(0, within)))) for _ in range(loops)]
        results.append(
            Result(
                benchmark="memset",
                function=function,
                params={"size": size, "chunk": 0, "loops": loops},
                bytes_per_loop=size,
                clock="ns",
                samples=ticks,
            )
        )
        described.append({"repetition": 0, "process": process})
    return ResultSet(results, described)


def flagged(base, new, **kw):
    [row] = compare(base, new, **kw)
    return row["changes"][0]["marker"] in ("(R)", "(I)")


# A/A: the false-positive rate --------------------------------------------------------


@pytest.mark.parametrize(
    "base_runs, new_runs, alpha",
    [(3, 3, 0.05), (5, 5, 0.05), (3, 3, 0.01), (5, 5, 0.01), (3, 5, 0.01)],
)
def test_identical_runs_are_flagged_at_most_alpha_of_the_time(base_runs, new_runs, alpha):
    # 3-5% between runs (4% here), 1% between loops: the 256MB memset.
    # A rate exactly alpha gives more than the binomial's 99.9% quantile of hits
    # once in a thousand seeds; loops taken as samples give 10-30x alpha (below).
    from scipy.stats import binom

    rng = random.Random(base_runs * 1000 + new_runs * 10 + int(alpha * 100))
    pairs = 600
    hits = sum(
        flagged(runs_set(rng, 60e9, base_runs), runs_set(rng, 60e9, new_runs), alpha=alpha)
        for _ in range(pairs)
    )
    assert hits <= binom.ppf(0.999, pairs, alpha)


def test_loops_as_samples_would_fail_the_same_simulation():
    # The test compare used before: Mann-Whitney U with every loop a sample. The
    # simulation above must be able to fail; this shows it does for that method.
    from scipy.stats import mannwhitneyu

    rng = random.Random(7)
    pairs, alpha = 200, 0.01
    hits = 0
    for _ in range(pairs):
        a, b = runs_set(rng, 60e9, 5), runs_set(rng, 60e9, 5)
        va = [v for r in a for v in r.values()]
        vb = [v for r in b for v in r.values()]
        change = abs(statistics.fmean(vb) / statistics.fmean(va) - 1)
        hits += change > 0.02 and mannwhitneyu(va, vb).pvalue < alpha
    assert hits / pairs > 10 * alpha


# A planted change ------------------------------------------------------------------


def test_a_planted_10_percent_change_is_found():
    rng = random.Random(11)
    trials = 200
    found = 0
    for _ in range(trials):
        [row] = compare(runs_set(rng, 60e9, 5, between=0.03), runs_set(rng, 54e9, 5, between=0.03))
        found += row["changes"][0]["marker"] == "(R)"
    assert found / trials >= 0.8


@pytest.mark.parametrize("factor, marker", [(0.9, "(R)"), (1.1, "(I)")])
def test_the_change_shown_is_of_the_centre(factor, marker):
    rng = random.Random(3)
    base, new = (
        runs_set(rng, 60e9, 5, between=0.005),
        runs_set(rng, 60e9 * factor, 5, between=0.005),
    )
    [row] = compare(base, new)
    c = row["changes"][0]
    assert c["marker"] == marker
    assert c["change_pct"] == pytest.approx(100 * (c["center"] / row["base"]["center"] - 1))
    assert c["runs"] == [5, 5] and row["base"]["runs"] == 5
    assert c["ci_pct"][0] < c["change_pct"] < c["ci_pct"][1]
    assert c["method"] == "Welch's t-test on the logs of per-run medians"


def test_a_cost_that_rises_is_a_regression():
    slow = compare_runs([[1.0, 1.01]] * 2 + [[0.99, 1.0]], [[1.2, 1.21]] * 3, unit="cycles/byte")
    assert slow["marker"] == "(R)"


def test_loops_of_one_run_are_not_runs():
    # Three Results in ONE process (a sweep with -r 3) are one run, whatever their loops say.
    rng = random.Random(5)
    one = runs_set(rng, 60e9, 3)
    one = ResultSet(one.results, [{"repetition": i, "process": 0} for i in range(3)])
    [row] = compare(one, runs_set(rng, 40e9, 5))
    assert row["base"]["runs"] == 1 and row["base"]["spread_of"] == "loops"
    assert row["changes"][0]["marker"] == "?"


# Fewer than 3 runs, and the legend -------------------------------------------------------


@pytest.mark.parametrize("runs", [1, 2])
def test_below_three_runs_a_change_gets_a_question_mark(runs):
    rng = random.Random(runs)
    rows = compare(runs_set(rng, 60e9, runs), runs_set(rng, 30e9, 5))
    c = rows[0]["changes"][0]
    assert c["marker"] == "?" and c["p_value"] is None
    assert c["change_pct"] == pytest.approx(-50, abs=5)
    text = format_table(rows, ["base", "new"])
    assert "(R)" not in text and "~" not in text
    legend = [line for line in text.splitlines() if line.startswith("? ")]
    assert legend and "fewer than 3 runs" in legend[0]
    assert "the variation between runs is unknown" in text and "--runs 3 or more" in text


def test_a_small_change_below_three_runs_has_no_marker_but_the_note():
    rng = random.Random(9)
    rows = compare(runs_set(rng, 60e9, 1, between=0), runs_set(rng, 60e9, 1, between=0))
    assert rows[0]["changes"][0]["marker"] == ""
    text = format_table(rows, ["base", "new"])
    assert "runs is unknown" in text
    assert not any(line.startswith(("? ", "(R)", "~ ")) for line in text.splitlines())


def test_the_legend_lists_only_the_markers_that_appear():
    rng = random.Random(4)
    base = runs_set(rng, 60e9, 5, between=0.002)
    text = format_table(compare(base, runs_set(rng, 50e9, 5, between=0.002)), ["a", "b"])
    lines = text.splitlines()
    assert any(line.startswith("(R) regression") for line in lines)
    assert not any(line.startswith(("~ ", "? ")) for line in lines)
    assert "note:" not in text
    text = format_table(compare(base, runs_set(rng, 60e9, 5, between=0.002)), ["a", "b"])
    assert text.splitlines()[-1].startswith("memset")  # no marker, no legend at all


def test_runs_per_side():
    rng = random.Random(2)
    rows = compare(runs_set(rng, 60e9, 3), runs_set(rng, 60e9, 5), runs_set(rng, 60e9, 1))
    assert runs_per_side(rows, 3) == ["3", "5", "1"]


# Report folders and the header -----------------------------------------------------------


def run_cli(capsys, *args):
    capsys.readouterr()
    status = main(["compare", *[str(a) for a in args]])
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def test_report_folders_compare_study_by_study(capsys):
    out = run_cli(capsys, os.path.join(FOLDERS, "base"), os.path.join(FOLDERS, "patched"))
    lines = out.splitlines()
    assert "[chunks]" in lines and "[extents]" in lines
    rows = {line.split("|")[0].strip(): line for line in lines if line.startswith("memset")}
    assert len(rows) == 5  # 3 extents + 2 chunks; advice.json and report.md passed over
    assert rows["memset x86-64-stosb chunk=0 page=2MB size=256MB"].endswith("(R)")
    regressions = [label for label, line in rows.items() if "(R)" in line or "(I)" in line]
    assert regressions == ["memset x86-64-stosb chunk=0 page=2MB size=256MB"]
    # The header: each side's kernel, command line, preemption, THP and runs.
    base_line = next(line for line in lines if line.startswith("base "))
    patched_line = next(line for line in lines if line.startswith("patched "))
    assert "6.18.0-base" in base_line and "6.18.0-patched+" in patched_line
    for line in (base_line, patched_line):
        assert "voluntary" in line and "enabled=madvise defrag=madvise" in line
        assert line.split()[-1] == "3"  # runs
    # One command line for both: said once.
    assert "command line (every side): root=/dev/vda1 console=ttyS0 preempt=voluntary" in lines
    assert "warning" not in out  # MemTotal 24MB apart: one machine, two kernels
    assert "method: Welch's t-test" in out


def test_a_folder_of_another_machine_is_warned_about(capsys):
    out = run_cli(capsys, os.path.join(FOLDERS, "base"), os.path.join(FOLDERS, "other"))
    lines = out.splitlines()
    # Command lines that differ: one per side.
    assert lines[1].endswith("root=/dev/vda1 console=ttyS0 preempt=voluntary")
    assert lines[2].endswith("root=/dev/nvme0n1p1 preempt=voluntary")
    assert not any(line.startswith("command line (every side)") for line in lines)
    [warning] = [line for line in lines if line.startswith("warning:")]
    assert "base and other were not measured on the same machine" in warning
    assert "CPU model" in warning and "caches" in warning and "memory" in warning


def test_folder_comparison_as_json(capsys):
    doc = json.loads(
        run_cli(
            capsys,
            os.path.join(FOLDERS, "base"),
            os.path.join(FOLDERS, "other"),
            "--format",
            "json",
        )
    )
    assert doc["names"] == ["base", "other"]
    assert doc["method"] == "Welch's t-test on the logs of per-run medians"
    assert [s["kernel_release"] for s in doc["sides"]] == ["6.18.0-base"] * 2
    assert [s["runs"] for s in doc["sides"]] == ["3", "3"]
    assert doc["machine_warnings"][0]["side"] == "other"
    assert {row["study"] for row in doc["rows"]} == {"extents", "chunks"}


def test_a_fleet_folder_of_runs_is_one_study(tmp_path):
    # run-1.json, run-2.json: the same points in each file are runs of one study.
    for i in (1, 2):
        shutil.copy(os.path.join(FOLDERS, "base", "extents.json"), tmp_path / f"run-{i}.json")
    rs, studies = load_sources(str(tmp_path))
    [row, *_] = compare(rs, rs, sources=studies)
    assert row["study"] is None and row["base"]["runs"] == 6


def test_machine_differences():
    a = {
        "cpu_model": "X",
        "memory": {"total_bytes": 16 << 30},
        "caches": [{"level": 3, "type": "Unified", "size_bytes": 32 * MB}],
    }
    assert machine_differences(a, dict(a, memory={"total_bytes": (16 << 30) - 50 * MB})) == []
    assert machine_differences(a, {"cpu_model": "X"}) == []  # facts one side lacks
    assert machine_differences(a, dict(a, memory={"total_bytes": 8 << 30})) == [
        "memory (16.0 GiB vs 8.0 GiB)"
    ]
    assert machine_differences(a, dict(a, cpu_model="Y")) == ["CPU model (X vs Y)"]


def test_side_facts_of_an_old_file():
    facts = side_facts({"cpu_model": "Old CPU", "kernel": "6.1.0"})
    assert facts == {
        "kernel_release": "6.1.0",
        "kernel_cmdline": "unknown",
        "preemption": "unknown",
        "thp": "unknown",
    }


def test_machine_records_the_kernel_command_line(tmp_path):
    from pagezero.system import machine as sysinfo

    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cmdline").write_text("root=/dev/vda1 preempt=full mitigations=off\n")
    info = sysinfo.machine(root=str(tmp_path))
    assert info["kernel_cmdline"] == "root=/dev/vda1 preempt=full mitigations=off"
    assert side_facts(info)["kernel_cmdline"] == info["kernel_cmdline"]


@pytest.mark.parametrize("bad", [["--alpha", "0"], ["--alpha", "1.5"], ["--threshold", "-1"]])
def test_bad_alpha_or_threshold_is_one_line(bad, capsys):
    assert (
        main(["compare", os.path.join(FOLDERS, "base"), os.path.join(FOLDERS, "patched"), *bad])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("pagezero: error: alpha must be in (0, 1)") and len(err.splitlines()) == 1


# Files saved before runs existed ---------------------------------------------------


def slower(path, out, factor):
    with open(path) as f:
        doc = json.load(f)
    for r in doc["results"]:
        r["samples"] = [int(s * factor) for s in r["samples"]]
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("name", ["results_v1.json", "results_v2.json"])
def test_old_files_compare_under_the_same_rule(name, tmp_path, capsys):
    # One process each: a 25% slowdown is shown, with "?" and the note, never (R).
    old = os.path.join(DATA, name)
    out = run_cli(capsys, old, slower(old, tmp_path / "slow.json", 1.25))
    rows = [line for line in out.splitlines() if line.startswith(("memset", "memcpy", "batch"))]
    assert rows and all(line.endswith("-20.0% ?") for line in rows)
    assert "(R)" not in out and "--runs 3 or more" in out
    doc = json.loads(run_cli(capsys, old, old, "--format", "json"))
    for row in doc["rows"]:
        assert {"label", "unit", "base", "changes"} <= set(row)
        assert {"n", "mean", "stdev_pct", "runs", "center"} <= set(row["base"])
        [c] = row["changes"]
        assert {"change_pct", "p_value", "marker", "note", "n", "mean", "runs", "method"} <= set(c)
        assert c["runs"] == [1, 1] and c["marker"] == ""


# compare --plot -----------------------------------------------------------------------


def test_plot_marks_with_the_threshold_given(tmp_path, monkeypatch):
    import pagezero.figures.plots as plot

    seen = []
    real = plot.compare

    def spy(*sets, **kw):
        seen.append(kw)
        return real(*sets, **kw)

    monkeypatch.setattr(plot, "compare", spy)
    assert (
        main(
            [
                "compare",
                os.path.join(FOLDERS, "base"),
                os.path.join(FOLDERS, "patched"),
                "--threshold",
                "20",
                "--alpha",
                "0.05",
                "--plot",
                str(tmp_path / "cmp"),
            ]
        )
        == 0
    )
    assert seen == [{"threshold": 0.2, "alpha": 0.05}]
    assert (tmp_path / "cmp.png").stat().st_size > 0


# benchmarks/aa_compare.py's pairing, on synthetic files ------------------------------

AA_SCRIPT = os.path.join(os.path.dirname(DATA), os.pardir, "benchmarks", "aa_compare.py")


def test_aa_benchmark_pairs_every_quiet_result_and_every_hog_one(tmp_path):
    from conftest import run_python

    rng = random.Random(21)
    for i in range(1, 5):
        runs_set(rng, 60e9, 5, between=0.01).save(str(tmp_path / f"q{i}.json"))
    for i in range(1, 3):
        runs_set(rng, 36e9, 5, between=0.01).save(str(tmp_path / f"h{i}.json"))
    p = run_python(AA_SCRIPT, "--from", str(tmp_path))
    assert "Traceback" not in p.stderr, p.stderr
    assert "A/A: 0 of 6 quiet pairs flagged (R)/(I) (alpha 0.01, threshold 2%)" in p.stdout
    assert "A/B: 8 of 8 hog-vs-quiet pairs found (R)" in p.stdout
    assert p.stdout.splitlines()[-1].startswith("PASS 0 of 6 quiet pairs flagged")
    assert p.returncode == 0


def test_aa_benchmark_dry_run_alternates_quiet_and_hog(tmp_path):
    from conftest import run_python

    p = run_python(AA_SCRIPT, "--dry-run", "--rounds", "3", "--keep", str(tmp_path), "--cpu", "0")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 6
    assert [line.startswith("hog on CPU 0 + ") for line in lines] == [False, True] * 3
    assert all("mem memset -s 256MB -l 10 -f x86-64-stosb --runs 5 -o" in line for line in lines)
    assert lines[0].endswith("q1.json") and lines[5].endswith("h3.json")
    assert list(tmp_path.iterdir()) == []  # nothing measured
