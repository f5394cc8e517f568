"""compare() and format_table() on synthetic result sets, and the plots
(files exist, are non-empty and are what their names say)."""

import random

import pytest

from pagezero.analysis.compare import compare, format_table
from pagezero.figures import plot_bars, plot_comparison, plot_rates
from pagezero.results.resultset import Result, ResultSet

KB, MB = 1 << 10, 1 << 20

MACHINE = {
    "cpu_model": "Test CPU",
    "kernel_release": "6.0.0-test",
    "caches": [
        {"level": 1, "type": "Data", "size_bytes": 48 * KB},
        {"level": 2, "type": "Unified", "size_bytes": 1 * MB},
        {"level": 3, "type": "Unified", "size_bytes": 32 * MB},
    ],
}

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# Helpers ----------------------------------------------------------------


def results(
    function,
    size,
    rate,
    benchmark="memset",
    reps=3,
    loops=5,
    noise=0.002,
    seed=0,
    clock="ns",
    **params,
):
    """`reps` Results of one point whose per-loop rates are about `rate` bytes/sec
    (for the cycles clock: about `rate` cycles per byte)."""
    rng = random.Random(seed)
    out = []
    for _ in range(reps):
        if clock == "cycles":
            ticks = [int(size * rate * (1 + rng.gauss(0, noise))) for _ in range(loops)]
        else:
            ticks = [int(1e9 * size / (rate * (1 + rng.gauss(0, noise)))) for _ in range(loops)]
        out.append(
            Result(
                benchmark=benchmark,
                function=function,
                params={"size": size, "chunk": 0, "loops": loops, **params},
                bytes_per_loop=size,
                clock=clock,
                samples=ticks,
                machine=MACHINE,
            )
        )
    return out


def result_set(*groups):
    """The groups' Results as one set, each Result of a group its own run (process)."""
    runs = [{"process": i} for g in groups for i in range(len(g))]
    return ResultSet([r for g in groups for r in g], runs, machine=MACHINE)


@pytest.fixture(scope="module")
def base_new():
    """base and new: function a regresses 10%, b improves 10%, c is unchanged;
    d is only in base, e only in new."""
    base = result_set(
        results("a", 1 * MB, 10e9, seed=1),
        results("b", 1 * MB, 10e9, seed=2),
        results("c", 1 * MB, 10e9, seed=3),
        results("d", 1 * MB, 10e9, seed=4),
    )
    new = result_set(
        results("a", 1 * MB, 9e9, seed=5),
        results("b", 1 * MB, 11e9, seed=6),
        results("c", 1 * MB, 10e9, seed=7),
        results("e", 1 * MB, 10e9, seed=8),
    )
    return base, new


def by_function(rows):
    return {row["label"].split()[1]: row for row in rows}


# compare ---------------------------------------------------------------------------


def test_compare_markers(base_new):
    rows = by_function(compare(*base_new))
    assert sorted(rows) == ["a", "b", "c", "d"]  # the base's points, e is not one
    assert rows["a"]["changes"][0]["marker"] == "(R)"
    assert rows["a"]["changes"][0]["change_pct"] == pytest.approx(-10, abs=0.5)
    assert rows["b"]["changes"][0]["marker"] == "(I)"
    assert rows["b"]["changes"][0]["change_pct"] == pytest.approx(10, abs=0.5)
    assert rows["c"]["changes"][0]["marker"] == ""
    assert rows["d"]["changes"] == [None]
    for f in "abc":
        assert rows[f]["changes"][0]["n"] == 15
        assert rows[f]["base"]["n"] == 15
        assert rows[f]["unit"] == "bytes/sec"


def test_compare_several_others(base_new):
    base, new = base_new
    rows = by_function(compare(base, new, base))
    assert [c["marker"] if c else None for c in rows["a"]["changes"]] == ["(R)", ""]
    assert rows["d"]["changes"][0] is None and rows["d"]["changes"][1]["marker"] == ""


def test_compare_threshold(base_new):
    rows = by_function(compare(*base_new, threshold=0.2))
    assert rows["a"]["changes"][0]["marker"] == ""


def test_compare_different_benchmarks():
    memset = result_set(results("a", 1 * MB, 10e9))
    memcpy = result_set(results("a", 1 * MB, 10e9, benchmark="memcpy"))
    with pytest.raises(ValueError, match="memset.*memcpy|memcpy.*memset"):
        compare(memset, memcpy)


def test_compare_needs_two(base_new):
    with pytest.raises(ValueError, match="needs a base and at least one other"):
        compare(base_new[0])


def test_format_table(base_new):
    rows = compare(*base_new)
    text = format_table(rows, ["base.json", "new.json"])
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].split(" | ")] == [
        "benchmark",
        "result class",
        "base.json",
        "new.json",
    ]
    body = {line.split()[1]: line for line in lines[2:6]}
    assert body["a"].rstrip().endswith("(R)")
    assert body["b"].rstrip().endswith("(I)")
    assert "(R)" not in body["c"] and "(I)" not in body["c"] and "~" not in body["c"]
    assert body["d"].rstrip().endswith("-")
    assert "GB/s" in body["a"] and "bytes/sec" in body["a"]
    assert any("regression" in line for line in lines)


def test_format_table_one_run_a_side_is_a_question_mark():
    # One run a side: its loops say nothing of the spread between runs, so a 20%
    # change is shown with "?", never (R), and the note says how to know more.
    base = result_set(results("a", 1 * MB, 10e9, reps=1, loops=3))
    new = result_set(results("a", 1 * MB, 8e9, reps=1, loops=3))
    text = format_table(compare(base, new), ["base", "new"])
    assert text.splitlines()[2].endswith("-20.0% ?")
    assert "(R)" not in text
    assert "the variation between runs is unknown" in text and "--runs 3" in text


def test_label():
    [r] = results("x86-64-stosb", 1 << 30, 10e9, reps=1, page="4KB", chunk=4 * KB)
    assert r.label() == "memset x86-64-stosb chunk=4KB page=4KB size=1GB"


# Plots ---------------------------------------------------------------------------


def check_plot(paths, stem):
    assert sorted(paths) == [f"{stem}.png", f"{stem}.svg"]
    with open(f"{stem}.png", "rb") as f:
        assert f.read(8) == PNG_MAGIC
    with open(f"{stem}.svg", "rb") as f:
        svg = f.read()
    assert b"<svg" in svg


@pytest.fixture(scope="module")
def curve():
    """Two kernels over extents from 4KB to 256MB, with a knee past the LLC."""
    groups = []
    for i, size in enumerate(1 << s for s in range(12, 29, 2)):
        groups.append(results("stosb", size, 20e9 if size > 32 * MB else 12e9, seed=i))
        groups.append(results("avx512-nt", size, 18e9, seed=100 + i))
    return result_set(*groups)


def test_plot_rates(curve, tmp_path):
    stem = str(tmp_path / "rates")
    check_plot(plot_rates(curve, stem), stem)


def test_plot_rates_makes_its_folder(curve, tmp_path):
    stem = str(tmp_path / "sub" / "dir" / "rates")
    check_plot(plot_rates(curve, stem, title="By extent"), stem)


def test_plot_bars(base_new, tmp_path):
    stem = str(tmp_path / "bars")
    check_plot(plot_bars(base_new[0], stem), stem)


def test_plot_bars_cycles(tmp_path):
    rs = result_set(results("a", 1 * MB, 0.1, clock="cycles"))
    stem = str(tmp_path / "cycles")
    check_plot(plot_bars(rs, stem), stem)


def test_plot_comparison(base_new, tmp_path):
    stem = str(tmp_path / "cmp")
    check_plot(plot_comparison(list(base_new), ["base", "new"], stem), stem)


def test_plot_rates_needs_rates(tmp_path):
    rs = result_set(results("a", 1 * MB, 0.1, clock="cycles"))
    with pytest.raises(ValueError, match=r"no rates \(bytes/sec\) to plot"):
        plot_rates(rs, str(tmp_path / "none"))
    assert list(tmp_path.iterdir()) == []


def test_plot_empty_set(tmp_path):
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_bars(ResultSet([]), str(tmp_path / "none"))
    with pytest.raises(ValueError, match="no rates"):
        plot_rates(ResultSet([]), str(tmp_path / "none"))
