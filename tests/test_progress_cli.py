"""Progress on the long commands, as a user runs them with stderr captured (not a
terminal): report, sweep, advise, predict and --runs N print a line per study or run
on stderr with the time left; --quiet none; stdout and the JSON files are the same
either way. Nothing is asserted about speed."""

import json
import os
import re

import pytest
from conftest import ok, pagezero_cli

from pagezero.results.resultset import ResultSet
from pagezero.studies.predict.study import minimum_fault_size
from pagezero.system.machine import machine

# "...; 3 s so far, about 5 s left", or the last step's "finishing", or a step that ran
# past its share of the estimate.
WHEN = re.compile(
    r"; \d+ (s|min \d\d s|h \d\d min) so far, "
    r"(about .+ left|finishing|this step is past its estimate.*)$"
)
TINY_ENV = dict(os.environ, PAGEZERO_SCALE="tiny")


def progress_lines(stderr, head):
    return [line for line in stderr.splitlines() if line.startswith(f"{head}: ")]


def test_report_a_line_per_study(tiny_report_run):
    _, proc = tiny_report_run
    out = ok(proc)
    assert out.startswith("report written to ")
    lines = progress_lines(proc.stderr, "pagezero report")
    assert re.match(
        r"pagezero report: 8 studies at the tiny scale, 1 run per point, into .*; about ", lines[0]
    )
    done = [line for line in lines if re.search(r"\[\d/8\] \w+ (done|failed) in ", line)]
    names = [re.search(r"\] (\w+) ", line).group(1) for line in done]
    assert names == ["extents", "chunks", "pages", "cold", "threads", "faults", "advice", "predict"]
    for line in done:
        assert WHEN.search(line), line
    assert done[-1].endswith("finishing")


def test_report_quiet(tmp_path):
    proc = pagezero_cli("report", "-o", tmp_path / "r", "--no-reserve", "-q", env=TINY_ENV)
    out = ok(proc)
    assert out.startswith("report written to ")
    assert not progress_lines(proc.stderr, "pagezero report"), proc.stderr
    assert "## Summary" in (tmp_path / "r" / "report.md").read_text()


SWEEP = ["sweep", "memset", "-g", "size=64KB", "-g", "loops=1", "-g", "function=generic,default"]


@pytest.mark.parametrize("processes", [1, 2])
def test_sweep_lines_and_quiet(tmp_path, processes):
    args = [*SWEEP, "-r", "2", "--warmup", "0", "--processes", str(processes)]
    loud = pagezero_cli(*args, "-o", tmp_path / "a.json")
    quiet = pagezero_cli(*args, "-o", tmp_path / "b.json", "--quiet")
    lines = progress_lines(loud.stderr, "pagezero sweep memset")
    if processes == 2:
        assert [line.split(";")[0] for line in lines] == [
            "pagezero sweep memset: memset run 1 of 2 done",
            "pagezero sweep memset: memset run 2 of 2 done",
        ]
    else:  # points: a line at most every 10 s, and the last
        assert lines and lines[-1].startswith("pagezero sweep memset: memset pass 2 of 2,")
    assert all(WHEN.search(line) for line in lines), lines
    assert lines[-1].endswith("finishing")
    assert not progress_lines(quiet.stderr, "pagezero sweep memset")
    # stdout: the same lines, but for the figures measured.
    labels = [[line.split(":")[0] for line in ok(p).splitlines()] for p in (loud, quiet)]
    assert labels[0] == labels[1] and len(labels[0]) == 2
    a, b = (ResultSet.load(str(tmp_path / n)) for n in ("a.json", "b.json"))
    assert len(a) == len(b) == 4


def test_runs_a_line_per_run(tmp_path):
    args = ["mem", "memset", "-s", "64KB", "-l", "2", "-f", "generic", "--runs", "2"]
    loud = pagezero_cli(*args, "--format", "simple")
    lines = progress_lines(loud.stderr, "pagezero")
    assert [line.split(";")[0] for line in lines] == [
        "pagezero: memset run 1 of 2 done",
        "pagezero: memset run 2 of 2 done",
    ]
    assert WHEN.search(lines[0]) and lines[1].endswith("finishing")
    float(ok(loud).strip())  # --format simple's one number, alone on stdout
    quiet = pagezero_cli(*args, "--format", "simple", "-q")
    assert not progress_lines(quiet.stderr, "pagezero")
    assert len(ok(quiet).splitlines()) == 1


def test_advise_lines_and_json_unchanged(tmp_path):
    loud = pagezero_cli("advise", "--quick", "--format", "json", "-o", tmp_path / "a.json")
    doc = json.loads(ok(loud))
    lines = progress_lines(loud.stderr, "pagezero advise")
    assert re.match(r"pagezero advise: \d+ kernels x \d+ extents, 1 run", lines[0])
    assert lines[-1].startswith("pagezero advise: advise-cell pass 1 of 1 done;")
    assert lines[-1].endswith("finishing")
    quiet = pagezero_cli("advise", "--quick", "--format", "json", "-q")
    assert not progress_lines(quiet.stderr, "pagezero advise")
    assert set(json.loads(ok(quiet))) == set(doc)
    assert json.loads((tmp_path / "a.json").read_text()).keys() == doc.keys()


def test_predict_a_line_per_run(tmp_path):
    # The least size predict takes here: twice the LLC.
    least = minimum_fault_size("2MB", machine()) or 2 << 20
    args = ["predict", "--size", str(least), "-l", "1", "--runs", "1", "--format", "json"]
    loud = pagezero_cli(*args)
    if loud.returncode == 1 and ("hugepages" in loud.stderr or "THP" in loud.stderr):
        pytest.skip(f"no 2MB pages for predict here: {loud.stderr.strip()}")
    doc = json.loads(ok(loud))
    lines = progress_lines(loud.stderr, "pagezero predict")
    # The warming pass, the fault runs without and with sampling, the replay run: a line each.
    assert [line.split(";")[0] for line in lines] == [
        "pagezero predict: faults run done (this process)",
        "pagezero predict: faults run done (this process)",
        "pagezero predict: faults run done (this process)",
        "pagezero predict: folio run 1 of 1 done",
    ]
    assert lines[-1].endswith("finishing")
    quiet = pagezero_cli(*args, "--quiet")
    assert not progress_lines(quiet.stderr, "pagezero predict")
    assert set(json.loads(ok(quiet))) == set(doc)
