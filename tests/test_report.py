"""`pagezero report`: the folder at PAGEZERO_SCALE=tiny, end to end; its summary
backed by its tables; runs as fresh processes and the spread mark; a failing
study named while the others are kept; a stop signal's exit status with
report.md written. Nothing is asserted about speed."""

import json
import os
import re
import signal
import time

import pytest
from conftest import check_usage_error as usage_error
from conftest import ok, start_python
from helpers.children import DEADLINE_S, finish, give_up
from helpers.cli import run_cli

from pagezero import MappingError
from pagezero.cli import main
from pagezero.interrupt import Interrupted
from pagezero.results.resultset import Result, ResultSet
from pagezero.runs import sweeps
from pagezero.studies import report as report_pkg
from pagezero.studies.report import cells as report_cells
from pagezero.studies.report import words as report_words
from pagezero.studies.report.cells import Section
from pagezero.studies.report.words import knee_line, knee_of

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TINY_ENV = dict(os.environ, PAGEZERO_SCALE="tiny")
KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


def check_plot(stem):
    with open(f"{stem}.png", "rb") as f:
        assert f.read(8) == PNG_MAGIC
    assert os.path.getsize(f"{stem}.svg") > 0


def summary_of(md):
    return md.split("## Summary", 1)[1].split("\n## ", 1)[0]


def table_cells(md):
    """Every cell of every markdown table in `md`, the spread mark and the
    interval ("+-3%") taken off."""
    found = set()
    for line in md.splitlines():
        if line.startswith("|") and not set(line) <= set("|-"):
            found |= {
                c.strip().rstrip(report_words.SPREAD_MARK).split(" +-")[0] for c in line.split("|")
            }
    return found


# The measured figures of a sentence: decimals, and ratios such as 2.07x.
FIGURE = re.compile(r"(?<![\w.])\d+\.\d+x?(?![\w.])")


# The tiny report, end to end (conftest's tiny_report_run, one a session) ----------


def test_report_tiny(tiny_report_run):
    d, proc = tiny_report_run
    out = ok(proc)
    assert "report.md" in out
    md = (d / "report.md").read_text()
    assert "## Summary" in md and "## Machine" in md
    summary = summary_of(md)
    assert summary.strip().startswith("### Answers\n\n- ")  # the answers first
    # The command prints summary.txt, the answers to paste, not report.md's markdown.
    text = (d / "summary.txt").read_text()
    assert out.endswith(text) and "### Answers" not in out
    assert max(map(len, text.splitlines())) <= 72
    assert text.endswith("Measured with:\n  PAGEZERO_SCALE=tiny pagezero report --no-reserve\n")
    # Each answer in report.md: one or two lines of a screen, its figure first, its table
    # last by a short name linked to a short anchor.
    answers = [x for x in summary.split("### Also found")[0].splitlines() if x.startswith("- ")]
    assert answers
    for answer in answers:
        assert answer[2].isdigit() and len(answer) <= 260, answer
        assert re.search(r" \(\[\w+ table\]\(#[a-z-]{,20}\)\)\.$", answer), answer
    for name in (
        "extents.json",
        "chunks.json",
        "pages.json",
        "cold.json",
        "threads.json",
        "faults.json",
    ):
        rs = ResultSet.load(str(d / name))
        assert len(rs) > 0 and not rs.interrupted
    for stem in ("extents", "chunks", "threads", "faults"):
        check_plot(d / stem)
        assert f"{stem}.png" in md
    assert "## Page faults" in md and "faults table" in summary
    assert "## Cold vs hot" in md and "cache-cold" in summary
    assert "## Several CPUs at once" in md
    assert "## Advice" in md and "budget" in summary
    advice = json.loads((d / "advice.json").read_text())
    assert {"knee_bytes", "llc_bytes", "best_kernel", "batch"} <= set(advice)
    # One run at the tiny scale, and the report says what that leaves unknown.
    assert "1 run per point" in md and "--runs 3" in md


def test_every_summary_figure_is_a_table_cell(tiny_report_run):
    # The summary said "Demand faults on 4KB pages run at 1.7 GB/s" while the
    # fault table said 2.53: every figure it quotes must be a cell of one of
    # the report's tables, with the same rounding.
    d, proc = tiny_report_run
    ok(proc)
    md = (d / "report.md").read_text()
    cells = table_cells(md)
    figures = [(f, line) for line in summary_of(md).splitlines() for f in FIGURE.findall(line)]
    assert figures, "the summary quotes no figures"
    missing = [(f, line) for f, line in figures if f not in cells]
    assert not missing, missing


def test_the_tables_say_which_pages(tiny_report_run):
    d, proc = tiny_report_run
    ok(proc)
    md = (d / "report.md").read_text()
    headings = [h for h in md.splitlines() if h.startswith("## ")]
    labels = ("4KB", "2MB THP", "2MB hugetlb", "2MB")  # 2MB: "gives no 2MB pages now"
    # Titles of a few words; the pages in the section's body, and per extent in its table.
    for title in ("## Kernels by extent", "## Chunk study", "## Page size"):
        assert title in headings
        body = md.split(f"{title}\n", 1)[1].split("\n## ", 1)[0]
        assert any(f"{label} pages" in body for label in labels), (title, body)
    assert len(max(headings, key=len)) < 30
    assert "| extent | pages |" in md and re.search(r"\n\| 4KB \| (4KB|2MB[^|]*) \|", md), md
    pages = ResultSet.load(str(d / "pages.json"))
    assert {r.params["thp"] for r in pages if r.params["page"] == "4KB"} >= {False}
    assert "| kernel | 4KB GB/s |" in md


def test_fastest_sentences_name_their_question(tiny_report_run):
    d, proc = tiny_report_run
    ok(proc)
    for line in summary_of((d / "report.md").read_text()).splitlines():
        if "fastest" in line:
            questions = ("hot", "larger than the", "in cache", "beyond the cache", "budget")
            assert any(q in line for q in questions), line


# The refusals: the command line in this process (run_cli), the scale in its environment.


def test_report_refuses_an_existing_report(tiny_report_run, monkeypatch):
    d, proc = tiny_report_run
    ok(proc)
    before = (d / "report.md").read_bytes()
    mtime = os.stat(d / "report.md").st_mtime_ns
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    line = usage_error(run_cli("report", "-o", d))
    assert str(d) in line
    assert (d / "report.md").read_bytes() == before
    assert os.stat(d / "report.md").st_mtime_ns == mtime


def test_report_bad_scale(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEZERO_SCALE", "huge")
    line = usage_error(run_cli("report", "-o", tmp_path / "r"))
    assert "PAGEZERO_SCALE='huge' is not one of" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("runs", ["0", "-1", "x"])
def test_report_bad_runs(tmp_path, runs, monkeypatch):
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    line = usage_error(run_cli("report", "-o", tmp_path / "r", "--runs", runs))
    assert (
        f"runs must be a positive int, not {runs}" in line
        or f"--runs: invalid integer '{runs}'" in line
    )
    assert not (tmp_path / "r").exists()


# The chunk study's sentence ---------------------------------------------------------


def test_the_chunk_sentence_quotes_the_rates_its_step_comes_from():
    # It said "4.0x as fast (10.0 vs 5.0 GB/s)": the rates at the knee and just
    # below it, beside a step from the two sides' medians.
    by_chunk = {64 * KB: 4e9, 1 * MB: 5e9, 16 * MB: 10e9, 64 * MB: 20e9}
    k = knee_of(by_chunk)
    assert k["knee"] == 16 * MB
    assert (k["below_rate"], k["above_rate"]) == (4.5e9, 15e9)
    line = knee_line("k", k, by_chunk, 32 * MB, 1 * GB, "2MB THP")
    step, above, below = re.search(
        r"([\d.]+)x as fast .*\(medians ([\d.]+) vs ([\d.]+) GB/s\)", line
    ).groups()
    assert float(step) == pytest.approx(float(above) / float(below), abs=0.005)


def test_no_knee_below_two_chunks():
    assert knee_of({4 * KB: 1e9, 64 * KB: 2e9}) is None


# Runs and the spread mark ---------------------------------------------------------------


def _result(rate_gbps, size, loops=3):
    ns = int(size / rate_gbps)
    return Result(
        benchmark="memset",
        function="k",
        params={"size": size, "chunk": 0, "loops": loops},
        bytes_per_loop=size,
        clock="ns",
        samples=(ns,) * loops,
    )


def _three_runs(rates, size):
    return ResultSet(
        [_result(r, size) for r in rates],
        [{"repetition": i, "process": i} for i in range(len(rates))],
    )


@pytest.mark.parametrize(
    "rates, size, mark",
    [
        ((10.0, 11.0, 12.0), 256 * MB, True),  # 9% between runs, beyond the LLC
        ((10.0, 10.1, 10.2), 256 * MB, False),  # 1%
        ((10.0, 11.0, 12.0), 1 * MB, False),  # inside the LLC
    ],
)
def test_cells_beyond_the_llc_with_a_wide_spread_between_runs_are_marked(rates, size, mark):
    rs = _three_runs(rates, size)
    table = report_cells.cells(rs, lambda r: r.params["size"])
    cell = table["k"][size]
    assert cell["runs"] == 3 and cell["median"] == pytest.approx(rates[1] * 1e9, rel=1e-3)
    lines = report_words.markdown_table(table, [size], "extent", 32 * MB)
    assert (report_words.SPREAD_MARK in lines[2]) is mark
    assert any("spread" in line for line in lines) is mark


def test_one_run_is_never_marked():
    # The loops of one process spread, but between runs nothing is known.
    r = Result(
        benchmark="memset",
        function="k",
        params={"size": 256 * MB, "chunk": 0},
        bytes_per_loop=256 * MB,
        clock="ns",
        samples=(10**7, 2 * 10**7, 3 * 10**7),
    )
    table = report_cells.cells(ResultSet([r]), lambda r: r.params["size"])
    assert not report_words.marked(table["k"][256 * MB], 32 * MB)


def test_runs_are_fresh_processes(monkeypatch):
    calls = []

    def fake_sweep(benchmark, grid, **kw):
        calls.append(kw)
        return ResultSet([])

    monkeypatch.setattr(sweeps, "sweep", fake_sweep)
    sweeps.sweep_points("memset", [{"size": 4096, "function": "generic"}], 3, 1)
    assert calls[0]["repeat"] == calls[0]["processes"] == 3


def test_an_interrupted_report_study_keeps_the_signals_name(monkeypatch):
    # report merged its sweeps' interrupted marks into True, which schema 3
    # files then recorded as "unknown signal".
    one = Result(
        benchmark="memset",
        function="generic",
        params={"size": 4096},
        clock="ns",
        bytes_per_loop=4096,
        samples=(1000,),
    )
    monkeypatch.setattr(sweeps, "sweep", lambda *a, **k: ResultSet([one], interrupted="SIGTERM"))
    rs = sweeps.sweep_points("memset", [{"size": 4096, "function": "generic"}], 1, 0)
    assert rs.interrupted == "SIGTERM"


def test_extents_over_two_runs(tmp_path):
    from pagezero.studies.report.extents import study_extents
    from pagezero.studies.report.scales import SCALES

    cfg = dict(SCALES["tiny"], runs=2, extents=[64 * KB])
    section = study_extents(str(tmp_path), cfg, {}, ["generic"], False)
    rs = ResultSet.load(str(tmp_path / "extents.json"))
    assert sorted({run["process"] for run in rs.runs}) == [0, 1]
    assert "median of 2 runs' medians" in " ".join(section.body)


# A failing study, a stop signal ------------------------------------------------------------


def _fake_studies(*behaviours):
    """STUDIES whose studies return a Section with one table and one summary
    figure, or raise what they are given."""

    def make(i, what):
        def study(out_dir, cfg, info, functions, progress):
            if isinstance(what, BaseException):
                raise what
            return Section(
                f"Study {i}",
                ["| a | b |", "|---|---|", f"| x | {i}.5 |"],
                [f"study {i} gives {i}.5 GB/s."],
            )

        return (f"s{i}", f"Study {i}", study)

    return tuple(make(i, w) for i, w in enumerate(behaviours))


def test_a_failing_study_is_named_and_the_others_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(
        report_pkg,
        "STUDIES",
        _fake_studies(None, MappingError(12, "not enough memory for a 1GB region"), None),
    )
    run = report_pkg.run_report(str(tmp_path / "r"), scale="tiny")
    md = (tmp_path / "r" / "report.md").read_text()
    assert [s.title for s in run.failed] == ["Study 1"]
    assert 'Study 1" failed: MappingError: not enough memory for a 1GB region' in md
    assert "study 0 gives 0.5" in md and "study 2 gives 2.5" in md
    assert not run.interrupted


def test_the_studies_after_the_cache_was_measured_evict_with_it(tmp_path, monkeypatch):
    # An Intel Xeon VM: sysfs's 480 MiB L3, a run that falls to memory between 64 and 128MB.
    from pagezero.analysis.cache import INFO_KEY, MeasuredCache
    from pagezero.measure.conditions import evict_bytes
    from pagezero.system import machine as sysinfo

    monkeypatch.delenv(sysinfo.MEASURED_CACHE_ENV, raising=False)
    seen = []

    def measures(out_dir, cfg, info, functions, progress):
        info[INFO_KEY] = MeasuredCache(64 << 20, 128 << 20, 480 << 20, "sysfs").to_json()
        return Section("extents", ["| a |", "|---|", "| 1.5 |"], ["1.5."])

    def evicts(out_dir, cfg, info, functions, progress):
        seen.append((evict_bytes(), sysinfo.machine()["eviction_cache"]["source"]))
        return Section("cold", ["| a |", "|---|", "| 2.5 |"], ["2.5."])

    studies = (("extents", "extents", measures), ("cold", "cold", evicts))
    monkeypatch.setattr(report_pkg, "STUDIES", studies)
    report_pkg.run_report(str(tmp_path / "r"), scale="tiny")
    assert seen == [(128 << 20, f"measured ({sysinfo.MEASURED_CACHE_ENV})")]
    assert sysinfo.MEASURED_CACHE_ENV not in os.environ  # the report's process as it was


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_report_exits_with_the_signals_status(
    tmp_path, monkeypatch, capsys, signum, status
):
    monkeypatch.setattr(report_pkg, "STUDIES", _fake_studies(None, Interrupted(signum), None))
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    assert main(["report", "-o", str(tmp_path / "r")]) == status
    md = (tmp_path / "r" / "report.md").read_text()
    assert "study 0 gives 0.5" in md and "study 2" not in md
    assert f"Interrupted by {signal.Signals(signum).name}" in md
    assert "Not run: s2" in md
    assert signal.Signals(signum).name in capsys.readouterr().err


def test_ctrl_c_in_a_real_report(tmp_path):
    # A real SIGINT once the first study has saved its file: exit 130, and
    # report.md written from what was measured.
    out = tmp_path / "r"
    argv = ("-m", "pagezero", "report", "-o", str(out), "--no-reserve")  # the pools as they are
    with start_python(*argv, env=TINY_ENV) as proc:
        deadline = time.monotonic() + DEADLINE_S
        while not (out / "extents.json").exists() and proc.poll() is None:
            if time.monotonic() > deadline:
                give_up(proc, "the first study saved no extents.json")
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = finish(proc)
    assert "Traceback" not in stdout + stderr
    assert proc.returncode == 130, stderr
    md = (out / "report.md").read_text()
    assert "Interrupted by SIGINT" in md and "## Kernels by extent" in md


def test_headroom_without_memory_keeps_the_fault_table(tmp_path, monkeypatch):
    from pagezero.studies.report import faults
    from pagezero.studies.report.scales import SCALES

    def no_memory(*a, **k):
        raise MappingError(12, "not enough memory for the clears")

    monkeypatch.setattr(faults.fault, "headroom", no_memory)
    section = faults.study_faults(str(tmp_path), SCALES["tiny"], {}, ["generic"], False, False)
    text = "\n".join(section.body)
    assert "| 4KB | demand |" in text
    assert "not measured: MappingError: not enough memory for the clears" in text
    assert not any("headroom" in line for line in section.summary + section.answers)


def test_a_page_size_whose_pages_are_taken_before_it_maps_is_skipped_and_the_rest_kept(
    monkeypatch, tmp_path
):
    # The pool had the 2MB pages at the check, another process took them before the sweep
    # mapped them: that size is named, the 4KB and 1GB faults are kept.
    from pagezero.studies.report import faults as report_faults
    from pagezero.studies.report.scales import SCALES

    def fake_sweep(benchmark, grid, **kw):
        if grid["page"] == ["2MB"]:
            raise RuntimeError(
                "sweep worker 0 failed: MappingError: [Errno 12] not enough 2MB hugepages: "
                "8 needed, 4 available"
            )
        results = [
            Result(
                benchmark="mmap",
                function=f,
                params={k: grid[k][0] for k in ("size", "page", "thp", "loops")},
                clock="ns",
                bytes_per_loop=grid["size"][0],
                samples=(1_000_000,),
            )
            for f in grid["function"]
        ]
        return ResultSet(results, [{"process": 0}] * len(results))

    monkeypatch.setattr(report_faults.fault, "check_hugepages", lambda plan: None)
    monkeypatch.setattr(sweeps, "sweep", fake_sweep)
    monkeypatch.setattr(report_faults, "_headroom", lambda *args: None)
    cfg = dict(SCALES["tiny"], runs=1)
    section = report_faults.study_faults(str(tmp_path), cfg, {}, ["generic"], None, False)
    assert section.failed is None
    pages = {r.params["page"] for r in ResultSet.load(str(tmp_path / "faults.json"))}
    assert pages == {"4KB", "1GB"}
    assert (
        "- the mmap sweep of page 2MB, size 16MB not measured: not enough 2MB hugepages: "
        "8 needed, 4 available" in section.body
    )
