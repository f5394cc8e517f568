"""compare's --format text: every line at most 80 columns for 2 and 6 other sides with long
names, the figures those of compare()'s rows, (R)/(I) shown with their legend, the points'
shared words said once, and the CLI's header for --by file and --by function."""

import random
import re

import pytest

from pagezero.analysis.compare import (
    VARIANT_LEGEND,
    compare,
    compare_variants,
    format_text,
    header_lines,
)
from pagezero.cli import main
from pagezero.results.resultset import Result, ResultSet

MB = 1 << 20
LONG = "next-20260922-patched-with-a-rather-long-name-{}"


def result_set(factors, functions=("x86-64-stosb", "x86-64-movnti"), runs=3, seed=0):
    """Each function at 64MB and 1GB, `runs` runs of 5 loops, ~10 GB/s times its factor."""
    rng = random.Random(seed)
    results, described = [], []
    for function, factor in zip(functions, factors):
        for size in (64 * MB, 1024 * MB):
            for process in range(runs):
                rate = 10e9 * factor * (1 + rng.gauss(0, 0.002))
                ticks = [int(1e9 * size / (rate * (1 + rng.gauss(0, 0.001)))) for _ in range(5)]
                params = {"size": size, "chunk": 0, "page": "4KB", "loops": 5}
                results.append(Result("memset", function, params, size, "ns", ticks))
                described.append({"repetition": 0, "process": process})
    return ResultSet(results, described)


def figures(text):
    """Every number with a % or of a base column in the text, as written."""
    return re.findall(r"(?:\+-)?[+-]?\d+\.\d+%?", text)


@pytest.mark.parametrize("others", [2, 6])
def test_every_line_fits_in_80_columns_and_shows_every_side(others):
    base = result_set([1.0, 1.0])
    sets = [result_set([1.0 + 0.1 * j, 0.8], seed=j + 1) for j in range(others)]
    names = [LONG.format(j) for j in range(others + 1)]
    rows = compare(base, *sets)
    text = format_text(rows, names)
    assert max(len(line) for line in text.splitlines()) <= 80
    for j, name in enumerate(names):  # each long name is named once, then shown as [j]
        assert f"[{j}] {name}" in text.splitlines()
    # Each table repeats the base: one base and its others per table, every other once.
    shown = [line for line in text.splitlines() if line.strip().startswith("[0]")]
    assert sum(line.count("[") - 1 for line in shown) == others


def test_the_figures_are_compare_rows_and_markers_are_shown():
    base = result_set([1.0, 1.0])
    rows = compare(base, result_set([1.2, 0.8], seed=1), result_set([1.0, 1.0], seed=2))
    text = format_text(rows, ["base.json", "new.json", "same.json"])
    lines = text.splitlines()
    for row in rows:
        function = row["label"].split()[1]
        size = next(w for w in row["label"].split() if w.startswith("size="))
        line = next(x for x in lines if x.startswith(f"{function} {size}"))
        expected = [f"{row['base']['center'] / 1e9:.2f}", f"+-{row['base']['spread_pct']:.1f}%"]
        for c in row["changes"]:
            expected += [f"{c['change_pct']:+.1f}%", f"+-{c['spread_pct']:.1f}%"]
            assert c["marker"] in line
        assert figures(line) == expected
    assert {"(I)", "(R)"} <= {c["marker"] for row in rows for c in row["changes"]}
    assert "(R) regression and (I) improvement: beyond the threshold and significant" in text
    # The words every point shares are said once, above the table: not in its rows.
    assert "memset chunk=0 page=4KB:" in lines
    assert all("page=4KB" not in x for x in lines if x.startswith("x86-64"))


def test_few_runs_and_other_units_are_said():
    base, new = result_set([1.0, 1.0], runs=1), result_set([1.5, 1.0], runs=1, seed=1)
    rows = compare(base, new)
    for row in rows:
        row["unit"] = "cycles/byte"  # as the cycles clock gives it
    text = format_text(rows, ["a", "b"])
    head = next(line for line in text.splitlines() if line.startswith("point "))
    assert "cycles/byte" in head and "GB/s" not in head
    assert "?" in text and "fewer than 3 runs on a side" in text
    assert "* one run on that side: the spread is of its loops" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_variants_with_long_function_names_fit():
    functions = [f"a-kernel-with-a-long-name-number-{j}" for j in range(7)]
    rs = result_set([1.0 + 0.05 * j for j in range(7)], functions=functions)
    names, rows, _ = compare_variants(rs, functions[0])
    text = format_text(rows, names, VARIANT_LEGEND)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "(I) better than the base function" in text


def test_the_header_is_wrapped_and_says_what_it_leaves_out():
    a = {"kernel_release": "6.18.0-base", "preemption": {"model": "none"}, "kernel_cmdline": "x"}
    b = dict(a, kernel_release="6.18.0-" + "patched" * 12, kernel_cmdline="y", cpu_model="Y")
    lines = header_lines([dict(a, cpu_model="X"), b], ["base", "new"], ["3", "5"], "M", 80)
    assert max(len(line) for line in lines) <= 80
    assert lines[0] == "base: Linux 6.18.0-base, preemption none, 3 runs per point"
    assert "the sides' kernel command lines differ: --format default shows them" in lines
    assert any(line.startswith("warning: base and new were not measured") for line in lines)
    assert lines[-1] == "method: M"


def test_the_cli_text_for_files_and_functions(tmp_path, capsys):
    paths = []
    for j, factors in enumerate(([1.0, 1.0], [1.2, 1.0])):
        paths.append(str(tmp_path / f"side-{j}.json"))
        result_set(factors, seed=j).save(paths[-1])
    assert main(["compare", *paths, "--format", "text"]) == 0
    by_file = capsys.readouterr().out
    assert main(["compare", *paths, "--by", "function", "--format", "text"]) == 0
    by_function = capsys.readouterr().out
    for text in (by_file, by_function):
        assert max(len(line) for line in text.splitlines()) <= 80
        assert "method: Welch's t-test on the logs of per-run medians" in text
    assert "(I)" in by_file and "side-0.json: Linux" in by_file
    assert "functions: x86-64-stosb, x86-64-movnti, each against x86-64-stosb" in by_function
    assert "note: a change without a marker is within the threshold" in by_function
