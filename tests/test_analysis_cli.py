"""The analysis commands end to end: `pagezero info|sweep|compare|plot`, looking
at the exit status, stdout, stderr and the files written; run in this process
(tests/helpers/cli.py run_cli: the command line's own main(), without a fresh
interpreter each time; the process itself is test_cli.py's). Sizes are tiny (64KB, one loop);
nothing is asserted about speed. The report's tests are in test_report.py."""

import json
import os
import random
import sys

import pytest
from conftest import check_usage_error as usage_error
from conftest import ok, pagezero_main
from helpers.cli import run_cli as cli

from pagezero.results.resultset import Result, ResultSet

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

TINY = ["-g", "function=default", "-g", "loops=1"]


# Helpers ----------------------------------------------------------------


def synthetic(path, benchmark="memset", factor=1.0, seed=0):
    """A results file of two points, 3 runs of 5 samples each, rates about 10 GB/s
    (x factor for function a)."""
    rng = random.Random(seed)
    results = []
    for function, f in (("a", factor), ("b", 1.0)):
        for _ in range(3):
            ticks = [
                int(1e9 * (1 << 20) / (10e9 * f * (1 + rng.gauss(0, 0.002)))) for _ in range(5)
            ]
            results.append(
                Result(
                    benchmark=benchmark,
                    function=function,
                    params={"size": 1 << 20, "chunk": 0, "loops": 5},
                    bytes_per_loop=1 << 20,
                    clock="ns",
                    samples=ticks,
                    machine={"cpu_model": "Test CPU"},
                )
            )
    # Each repetition its own process: three runs a point, as --runs 3 gives.
    ResultSet(results, [{"repetition": i, "process": i} for i in range(3)] * 2).save(str(path))
    return path


def check_plot(stem):
    with open(f"{stem}.png", "rb") as f:
        assert f.read(8) == PNG_MAGIC
    assert os.path.getsize(f"{stem}.svg") > 0


# info --------------------------------------------------------------------------


def test_info_text():
    out = ok(cli("info"))
    assert "L3" in out or "cache" in out
    assert "preemption:" in out and "thp:" in out


def test_info_text_is_a_deprecated_spelling_of_default():
    proc = cli("info", "--format", "text")
    labels = [line.split(":")[0] for line in ok(proc).splitlines()]
    assert labels == [line.split(":")[0] for line in ok(cli("info")).splitlines()]
    assert proc.stderr.strip() == (
        "pagezero: warning: --format text is deprecated: use --format default"
    )


def test_info_json():
    info = json.loads(ok(cli("info", "--format", "json")))
    assert info["caches"]
    assert all(c["size_bytes"] > 0 and c["source"] for c in info["caches"])
    assert info["cpu_model"]


# sweep ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    proc = cli(
        "sweep",
        "memset",
        *TINY,
        "-g",
        "size=64KB,128KB",
        "-r",
        "2",
        "-o",
        d / "X.json",
        "--csv",
        d / "X.csv",
    )
    return d, proc


def test_sweep_writes_json_and_csv(swept):
    d, proc = swept
    out = ok(proc)
    lines = out.strip().splitlines()
    assert len(lines) == 2  # one per point
    assert all("memset default" in line and "GB/s" in line for line in lines)
    rs = ResultSet.load(str(d / "X.json"))
    assert len(rs) == 4
    assert sorted(run["repetition"] for run in rs.runs) == [0, 0, 1, 1]
    csv_lines = (d / "X.csv").read_text().splitlines()
    assert csv_lines[0].startswith("benchmark,function,")
    assert len(csv_lines) == 1 + 4  # header + one row per sample
    assert not [p for p in os.listdir(d) if p.startswith(".")]  # no temporary left


@pytest.mark.parametrize(
    "name, text, flags",
    [
        # A JSON table, completed by a -g flag.
        (
            "grid.json",
            json.dumps({"function": ["default"], "size": ["64KB", "128KB"]}),
            ["-g", "loops=1"],
        ),
        # A TOML [grid] table, single values standing for lists of one.
        ("grid.toml", '[grid]\nfunction = "default"\nsize = ["64KB", "128KB"]\nloops = 1\n', []),
    ],
    ids=["json", "toml"],
)
def test_sweep_grid_from_file(tmp_path, name, text, flags):
    (tmp_path / name).write_text(text)
    argv = ["sweep", "memset", "--grid", tmp_path / name, *flags, "-r", "1", "--warmup", "0"]
    proc = cli(*argv, "-o", tmp_path / "out.json")
    if name.endswith(".toml") and sys.version_info < (3, 11):
        # No tomllib before 3.11: the one line says so, and what to use instead.
        assert "TOML grids need Python 3.11 or later; use JSON" in usage_error(proc)
        return
    out = ok(proc)
    assert len(out.strip().splitlines()) == 2
    rs = ResultSet.load(str(tmp_path / "out.json"))
    assert sorted(r.params["size"] for r in rs) == [64 << 10, 128 << 10]
    assert all(r.function == "default" and r.loops == 1 for r in rs)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["memset", *TINY, "-g", "size=64KB", "-g", "bogus=1"], "bogus"),
        (["memset", *TINY, "-g", "size=0"], "size"),
        (["memset", *TINY, "-g", "size=64KB,0"], "size"),
        (["memset", *TINY, "-g", "nothing"], "nothing"),
        (["memset", *TINY, "-g", "size="], "size"),
        (["memset", *TINY, "-g", "size=64KB", "-r", "0"], "repeat"),
        (["memset", *TINY, "-g", "size=64KB", "-o", "{tmp}/no/such/dir/X.json"], "no/such/dir"),
        (["memset", *TINY, "-g", "size=64KB", "--csv", "{tmp}/no/such/dir/X.csv"], "no/such/dir"),
        (["memset", *TINY, "--grid", "{tmp}/missing.toml"], "missing.toml"),
        (["memset", *TINY, "--grid", "{tmp}/bad.toml"], "bad.toml"),
        (["memset", *TINY, "--grid", "{tmp}/bad.json"], "bad.json"),
        (["nosuchbench", "-g", "size=64KB"], "nosuchbench"),
    ],
    ids=[
        "unknown-param",
        "size-0",
        "size-0-late",
        "no-equals",
        "no-values",
        "repeat-0",
        "missing-dir",
        "missing-csv-dir",
        "missing-grid",
        "bad-toml",
        "bad-json",
        "unknown-benchmark",
    ],
)
def test_sweep_bad_input(tmp_path, args, needle, capsys):
    (tmp_path / "bad.toml").write_text("size = [64KB\n")
    (tmp_path / "bad.json").write_text("[1, 2")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "X.json")]
    before = set(os.listdir(tmp_path))
    line = usage_error(pagezero_main(capsys, "sweep", *args))
    if needle == "bad.toml" and sys.version_info < (3, 11):
        needle = "TOML grids need Python 3.11"  # the file is not read: no tomllib
    assert needle in line
    assert set(os.listdir(tmp_path)) == before  # nothing written


# compare --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("compare")
    return (
        synthetic(d / "A.json", seed=1),
        synthetic(d / "B.json", factor=0.9, seed=2),
        synthetic(d / "C.json", factor=1.1, seed=3),
    )


def test_compare_text(pair):
    a, b, c = pair
    out = ok(cli("compare", a, b, c))
    lines = out.splitlines()
    table = next(i for i, line in enumerate(lines) if "result class" in line)
    assert "A.json" in lines[table] and "B.json" in lines[table] and "C.json" in lines[table]
    assert "method: Welch's t-test on the logs of per-run medians" in out
    row_a = next(line for line in lines if line.startswith("memset a "))
    assert "(R)" in row_a and "(I)" in row_a
    row_b = next(line for line in lines if line.startswith("memset b "))
    assert "(R)" not in row_b and "(I)" not in row_b


def test_compare_simple_prints_the_base_and_each_change(pair):
    a, b, c = pair
    doc = json.loads(ok(cli("compare", a, b, c, "--format", "json")))
    lines = ok(cli("compare", a, b, c, "--format", "simple")).splitlines()
    assert len(lines) == len(doc["rows"])
    for line, row in zip(lines, doc["rows"]):
        base, *changes = (float(x) for x in line.split())
        assert base == pytest.approx(row["base"]["center"], rel=1e-6)
        assert changes == pytest.approx(
            [ch["change_pct"] for ch in row["changes"]], rel=1e-6, abs=1e-6
        )


def test_compare_json(pair):
    a, b, _ = pair
    doc = json.loads(ok(cli("compare", a, b, "--format", "json")))
    assert doc["names"] == ["A.json", "B.json"]
    markers = {row["label"].split()[1]: row["changes"][0]["marker"] for row in doc["rows"]}
    assert markers == {"a": "(R)", "b": ""}


def test_compare_threshold_flag(pair):
    a, b, _ = pair
    doc = json.loads(ok(cli("compare", a, b, "--format", "json", "--threshold", "20")))
    assert all(row["changes"][0]["marker"] == "" for row in doc["rows"])


def test_compare_plot(pair, tmp_path):
    a, b, _ = pair
    ok(cli("compare", a, b, "--plot", tmp_path / "cmp"))
    check_plot(tmp_path / "cmp")


def test_compare_real_sweep_with_itself(swept):
    d, proc = swept
    ok(proc)
    out = ok(cli("compare", d / "X.json", d / "X.json"))
    rows = [line for line in out.splitlines() if line.startswith("memset ")]
    assert len(rows) == 2
    assert all(line.rstrip().endswith("+0.0%") for line in rows)


@pytest.mark.parametrize(
    "case",
    ["one-file", "not-results", "not-json", "missing", "memset-vs-memcpy", "bad-run", "plot-dir"],
)
def test_compare_bad_input(pair, tmp_path, case):
    a, b, _ = pair
    (tmp_path / "other.json").write_text(json.dumps({"hello": "world"}))
    (tmp_path / "text.json").write_text("not json at all")
    doc = json.loads(a.read_text())
    doc["results"][0]["run"] = []
    (tmp_path / "badrun.json").write_text(json.dumps(doc))
    args = {
        "one-file": [a],
        "not-results": [a, tmp_path / "other.json"],
        "not-json": [tmp_path / "text.json", a],
        "missing": [a, tmp_path / "missing.json"],
        "memset-vs-memcpy": [a, synthetic(tmp_path / "memcpy.json", benchmark="memcpy")],
        "bad-run": [a, tmp_path / "badrun.json"],
        "plot-dir": [a, b, "--plot", tmp_path / "no" / "dir" / "cmp"],
    }[case]
    line = usage_error(cli("compare", *args))
    if case == "memset-vs-memcpy":
        assert "memset" in line and "memcpy" in line


# plot ----------------------------------------------------------------------------


def test_plot(swept, tmp_path):
    d, proc = swept
    ok(proc)
    out = ok(cli("plot", d / "X.json", "-o", tmp_path / "stem"))
    check_plot(tmp_path / "stem")
    assert str(tmp_path / "stem.png") in out


@pytest.mark.parametrize("case", ["missing", "not-results"])
def test_plot_bad_input(tmp_path, case):
    (tmp_path / "other.json").write_text("{}")
    path = tmp_path / ("missing.json" if case == "missing" else "other.json")
    words = "no such file" if case == "missing" else "not a pagezero results file"
    assert usage_error(cli("plot", path, "-o", tmp_path / "stem")).endswith(f"{path}: {words}")
    assert not (tmp_path / "stem.png").exists()
