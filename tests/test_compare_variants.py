"""`pagezero compare --by function` end to end: the functions of one or more files side by
side against a base function, with compare's test on the runs; and a folder against a folder
at another scale, which compares what they share and says in one line what it left out."""

import json
import random
import re

import pytest
from helpers.cli import run_cli

from pagezero.results.resultset import Result, ResultSet

KB, MB = 1 << 10, 1 << 20
MACHINE = {"cpu_model": "Test CPU", "kernel_release": "6.0.0-test", "hostname": "lab"}
CELL = re.compile(r"^[+-]\d+\.\d%( \(R\)| \(I\)| ~| \?)?$")


def ok(p):
    assert p.returncode == 0, p.stderr
    return p.stdout


def usage_error(p):
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout)
    (line,) = p.stderr.splitlines()
    assert line.startswith("pagezero: error: ")
    return line


def runs_of(function, size, rate, runs=3, loops=5, seed=0, benchmark="memset"):
    """`runs` runs (processes) of one point at about `rate` bytes/sec, 0.2% noise."""
    rng = random.Random(f"{function} {size} {seed}")  # str seeds are not hash-randomized
    out = []
    for _ in range(runs):
        ticks = [int(1e9 * size / (rate * (1 + rng.gauss(0, 0.002)))) for _ in range(loops)]
        params = {"size": size, "chunk": 0, "page": "4KB", "loops": loops}
        out.append(
            Result(
                benchmark=benchmark,
                function=function,
                params=params,
                bytes_per_loop=size,
                clock="ns",
                samples=ticks,
                machine=MACHINE,
            )
        )
    return out


def save(path, *groups):
    """The groups' Results as one file, each Result a run (process) of its own."""
    results, runs = [], []
    for group in groups:
        for r in group:
            results.append(r)
            runs.append({"process": len(runs)})
    ResultSet(results, runs, MACHINE).save(path)
    return path


@pytest.fixture
def kernels_file(tmp_path):
    # stosb the base; movnti twice as fast; sse2-nt the same within noise, at two sizes.
    groups = []
    for size in (1 * MB, 256 * MB):
        groups += [
            runs_of("x86-64-stosb", size, 30e9),
            runs_of("x86-64-movnti", size, 60e9),
            runs_of("x86-64-sse2-nt", size, 30.05e9),
        ]
    return save(tmp_path / "kernels.json", *groups)


def pct(cell):
    return float(cell.split("%")[0])


def table_rows(stdout):
    """{row label: [cells after the base cell]} of the table's body."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("benchmark "))
    rows = {}
    for line in lines[start + 2 :]:
        if line.startswith("["):  # a study's group line
            continue
        cells = [c.strip() for c in line.split(" | ")]
        if len(cells) < 3:
            break
        rows[cells[0]] = cells[2:]
    return lines[start], rows


def test_one_file_of_kernels_side_by_side_against_the_base(kernels_file):
    out = ok(run_cli("compare", kernels_file, "--by", "function", "--base", "x86-64-stosb"))
    header, rows = table_rows(out)
    assert [c.strip() for c in header.split(" | ")] == [
        "benchmark",
        "result class",
        "x86-64-stosb",
        "x86-64-movnti",
        "x86-64-sse2-nt",
    ]
    # A row per point, named without its function; the base in GB/s, the others' changes.
    assert sorted(rows) == [
        "memset chunk=0 page=4KB size=1MB",
        "memset chunk=0 page=4KB size=256MB",
    ]
    for base_cell, movnti, sse2 in rows.values():
        assert re.fullmatch(r"\d\d\.\d\d GB/s \+-\d+\.\d%", base_cell), base_cell
        assert float(base_cell.split()[0]) == pytest.approx(30, rel=0.01)
        assert pct(movnti) == pytest.approx(100, abs=1) and movnti.endswith("(I)")
        assert CELL.match(sse2) and abs(pct(sse2)) < 2 and "(" not in sse2  # a tie
    assert (
        "functions: x86-64-stosb, x86-64-movnti, x86-64-sse2-nt, each against x86-64-stosb\n" in out
    )
    assert "(R) worse and (I) better than the base function" in out
    assert "note: a change without a marker is within the threshold: a tie with the base" in out
    assert "left out" not in out


def test_the_base_is_the_first_function_unless_named(kernels_file):
    out = ok(run_cli("compare", kernels_file, "--by", "function"))
    assert (
        "each against x86-64-stosb (the first in the kernel table; --base chooses another)" in out
    )
    _, rows = table_rows(
        ok(run_cli("compare", kernels_file, "--by", "function", "--base", "x86-64-movnti"))
    )
    for _, stosb, sse2 in rows.values():
        assert pct(stosb) == pytest.approx(-50, abs=0.5) and stosb.endswith("(R)")
        assert pct(sse2) == pytest.approx(-50, abs=0.5) and sse2.endswith("(R)")


def test_json_names_the_base_and_the_functions(kernels_file):
    doc = json.loads(ok(run_cli("compare", kernels_file, "--by", "function", "--format", "json")))
    assert doc["by"] == "function" and doc["base"] == "x86-64-stosb"
    assert doc["names"] == ["x86-64-stosb", "x86-64-movnti", "x86-64-sse2-nt"]
    assert doc["files"] == ["kernels.json"] and doc["method"].startswith("Welch")
    assert len(doc["rows"]) == 2
    for row in doc["rows"]:
        assert row["unit"] == "bytes/sec" and row["base"]["runs"] == 3
        movnti, sse2 = row["changes"]
        assert movnti["marker"] == "(I)" and movnti["p_value"] < 0.01
        assert sse2["marker"] == "" and abs(sse2["change_pct"]) < 2
    assert doc["left_out"] == {
        "base_only": 0,
        "without_base": {"x86-64-movnti": 0, "x86-64-sse2-nt": 0},
    }


def test_kernels_of_two_files_and_what_one_base_lacks(tmp_path):
    # stosb.json at 1MB and 256MB, movnti.json at 1MB and 4KB: one point shared.
    a = save(
        tmp_path / "stosb.json",
        runs_of("x86-64-stosb", MB, 30e9),
        runs_of("x86-64-stosb", 256 * MB, 30e9),
    )
    b = save(
        tmp_path / "movnti.json",
        runs_of("x86-64-movnti", MB, 60e9),
        runs_of("x86-64-movnti", 4 * KB, 60e9),
    )
    out = ok(run_cli("compare", a, b, "--by", "function", "--base", "x86-64-stosb"))
    _, rows = table_rows(out)
    assert list(rows) == ["memset chunk=0 page=4KB size=1MB"]
    assert out.splitlines()[-1] == (
        "left out: 1 point only x86-64-stosb has; 1 point x86-64-stosb lacks (x86-64-movnti 1)"
    )
    # Without --by function the two share no point: the error says what to use.
    line = usage_error(run_cli("compare", a, b))
    assert "no point in common" in line and line.endswith("compare with --by function")


def test_a_function_in_two_files_pools_their_runs(tmp_path):
    a = save(tmp_path / "a.json", runs_of("x86-64-stosb", MB, 30e9), runs_of("generic", MB, 20e9))
    b = save(tmp_path / "b.json", runs_of("x86-64-stosb", MB, 30e9, seed=1))
    out = ok(run_cli("compare", a, b, "--by", "function", "--base", "x86-64-stosb"))
    assert "runs pooled across a.json, b.json for x86-64-stosb\n" in out
    args = ("--by", "function", "--base", "x86-64-stosb", "--format", "json")
    doc = json.loads(ok(run_cli("compare", a, b, *args)))
    assert doc["rows"][0]["base"]["runs"] == 6 and doc["rows"][0]["changes"][0]["runs"] == [6, 3]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--base", "x86-64-stosb"], "--base names the base function: use it with --by function"),
        (["--by", "function", "--base", "nope"], "'nope' is not a function of these results"),
        (["--by", "nope"], "invalid choice"),
    ],
)
def test_bad_variant_options_are_one_line(kernels_file, args, needle):
    assert needle in usage_error(run_cli("compare", kernels_file, *args))


def test_one_function_only_has_nothing_to_set_beside_it(tmp_path):
    a = save(tmp_path / "a.json", runs_of("x86-64-stosb", MB, 30e9))
    line = usage_error(run_cli("compare", a, "--by", "function"))
    assert "needs results of at least two" in line


def test_a_real_run_of_every_workload_side_by_side(tmp_path):
    out = tmp_path / "mmap.json"
    ok(run_cli("mem", "mmap", "-s", "4MB", "-l", "2", "-o", out))
    text = ok(run_cli("compare", out, "--by", "function", "--base", "demand"))
    header, rows = table_rows(text)
    assert [c.strip() for c in header.split(" | ")][2:] == ["demand", "populate", "populate-write"]
    ((label, cells),) = rows.items()
    assert label.startswith("mmap ") and "demand" not in label
    assert cells[0].endswith("(loops)") and " GB/s +-" in cells[0]
    assert all(CELL.match(c) for c in cells[1:]), cells


def test_without_base_the_kernel_tables_order_decides_not_the_files(tmp_path):
    # --runs shuffles the kernels in each run: the columns keep the registry's order.
    a = save(tmp_path / "a.json", runs_of("x86-64-stosb", MB, 30e9), runs_of("default", MB, 20e9))
    b = save(tmp_path / "b.json", runs_of("generic", MB, 20e9))
    doc = json.loads(ok(run_cli("compare", a, b, "--by", "function", "--format", "json")))
    assert doc["names"] == ["default", "generic", "x86-64-stosb"] and doc["base"] == "default"


def test_a_real_memset_of_two_kernels_in_two_files(tmp_path):
    a, b = tmp_path / "stosb.json", tmp_path / "generic.json"
    ok(run_cli("mem", "memset", "-s", "64KB", "-l", "3", "-f", "x86-64-stosb", "-o", a))
    ok(run_cli("mem", "memset", "-s", "64KB", "-l", "3", "-f", "generic", "-o", b))
    text = ok(run_cli("compare", a, b, "--by", "function", "--plot", tmp_path / "cmp"))
    _, rows = table_rows(text)
    ((label, (base_cell, generic)),) = rows.items()
    assert label == "memset chunk=0 page=4KB size=64KB thp=false value=0"
    assert " GB/s +-" in base_cell and CELL.match(generic)
    assert (tmp_path / "cmp.png").stat().st_size > 0 and (tmp_path / "cmp.svg").stat().st_size > 0


# A folder against a folder at another scale -------------------------------------------


def folder(path, sizes, chunks):
    path.mkdir()
    save(path / "extents.json", *(runs_of("x86-64-stosb", s, 30e9) for s in sizes))
    save(
        path / "chunks.json",
        *(runs_of("x86-64-stosb", c, 29e9, benchmark="memcpy") for c in chunks),
    )
    (path / "report.md").write_text("not results\n")
    return path


def test_a_full_report_against_a_quick_one_compares_what_they_share(tmp_path):
    full = folder(tmp_path / "full", [4 * KB, MB, 256 * MB, 1024 * MB], [8 * MB, 32 * MB, 64 * MB])
    quick = folder(tmp_path / "quick", [4 * KB, MB, 2 * MB], [8 * MB])
    out = ok(run_cli("compare", full, quick))
    _, rows = table_rows(out)
    sizes = sorted(label.split("size=")[1] for label in rows)
    assert sizes == ["1MB", "4KB", "8MB"]  # the shared points, none shown as "-"
    assert all(cells[1] != "-" for cells in rows.values())
    assert "[chunks]" in out and "[extents]" in out
    assert out.splitlines()[-1] == (
        "left out: 4 points only full has (chunks 2, extents 2); 1 point full lacks (quick 1)"
    )
    doc = json.loads(ok(run_cli("compare", full, quick, "--format", "json")))
    assert len(doc["rows"]) == 3
    assert doc["left_out"] == {"base_only": 4, "without_base": {"quick": 1}}
