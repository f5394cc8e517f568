"""The report's hugepages: as root it reserves what its fault and predict studies lack,
around each, says so in one line, and the pools are as they were afterwards: after a
normal run, a failed study, a stop signal caught as a study's and a real SIGTERM;
--no-reserve keeps them; not root, one line says what root would run.

The pools are a fake sysfs (tests/helpers/fake_sysfs.py, 2MB and 1GB), the studies
fakes that read the pools while they run; one test resizes the real pools (root).
"""

import io
import os
import signal

import pytest
from conftest import start_python
from helpers.children import finish, read_line
from helpers.fake_sysfs import FakeKernel

from pagezero._core import MappingError, PagezeroError
from pagezero.cli import main
from pagezero.interrupt import Interrupted, signals_interrupt
from pagezero.studies import report as report_pkg
from pagezero.studies.report import pools
from pagezero.studies.report.cells import Section
from pagezero.studies.report.scales import SCALES
from pagezero.system import hugepages
from pagezero.units import format_page

TINY = SCALES["tiny"]
# What the tiny scale's studies map at once: 16MB of 2MB pages, one 1GB page; predict's
# quick scale, 2MB only, at least twice the LLC: the fixture's machine has 8MB of it.
FAULTS_NEED = {"2MB": 8, "1GB": 1}
PREDICT_NEED = {"2MB": 8}


def with_llc(nbytes):
    """A machine() dict with an LLC of `nbytes`, as sysfs shows it."""
    return {"caches": [{"level": 3, "type": "Unified", "size_bytes": nbytes}]}


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A fake sysfs with a 2MB and a 1GB pool, as root: {page: FakeKernel}."""
    found = {"2MB": FakeKernel(tmp_path), "1GB": FakeKernel(tmp_path, page_kb=1 << 20)}
    monkeypatch.setattr(hugepages, "SYSFS", str(tmp_path))
    monkeypatch.setattr(
        hugepages,
        "_write",
        lambda path, v: found["1GB" if "1048576kB" in path else "2MB"].write(path, v),
    )
    monkeypatch.setattr(hugepages.os, "geteuid", lambda: 0)
    monkeypatch.setattr(report_pkg.os, "geteuid", lambda: 0)
    monkeypatch.setattr(pools, "machine", lambda: with_llc(8 << 20))  # predict: 16MB or more
    for k in found.values():
        k.warmed = []  # the bytes of each warm-up pass over its pages (fault.warm)
    monkeypatch.setattr(
        pools.fault, "warm", lambda plan: found[format_page(plan.shift)].warmed.append(plan.nbytes)
    )
    return found


def totals(kernels):
    return {page: k.get("total") for page, k in kernels.items()}


def fake_studies(monkeypatch, seen, faults=None):
    """STUDIES: "faults" and "predict" noting the pools they see, `faults` raised by the
    first; an extents study between that sees them as they were."""

    def study(name, what=None):
        def run(out_dir, cfg, info, functions, progress, **kwargs):
            seen[name] = {p: x.available for p, x in hugepages.pools().items()}
            if what is not None:
                raise what
            return Section(name, ["| a | b |", "|---|---|", "| x | 1.5 |"], [f"{name} 1.5."])

        return (name, name, run)

    studies = (study("faults", faults), study("extents"), study("predict"))
    monkeypatch.setattr(report_pkg, "STUDIES", studies)


def test_the_needs_follow_the_scale():
    assert pools.study_needs("faults", TINY, True) == FAULTS_NEED
    assert pools.study_needs("predict", TINY, True, with_llc(8 << 20)) == PREDICT_NEED
    full = SCALES["full"]
    assert pools.study_needs("faults", full, False) == {"2MB": 512, "1GB": 1}
    assert pools.study_needs("predict", full, False, with_llc(32 << 20)) == {"2MB": 512, "1GB": 1}
    assert pools.study_needs("extents", full, False) == {}


def test_predict_needs_twice_the_llc_at_every_scale():
    # predict faults at least twice the LLC (it refuses less): the pools must hold that much.
    assert pools.study_needs("predict", TINY, True, with_llc(32 << 20)) == {"2MB": 32}
    big = with_llc(480 << 20)  # an Intel Xeon VM's sysfs
    assert pools.study_needs("predict", SCALES["quick"], True, big) == {"2MB": 480}


def test_root_reserves_around_each_study_and_gives_back(kernels, monkeypatch, tmp_path):
    kernels["2MB"].set(total=2, free=2)
    seen = {}
    fake_studies(monkeypatch, seen)
    out = io.StringIO()
    run = report_pkg.run_report(str(tmp_path / "r"), scale="tiny", progress=out)
    assert seen["faults"] == FAULTS_NEED
    assert seen["extents"] == {"2MB": 2, "1GB": 0}  # given back between the studies
    assert seen["predict"]["2MB"] == 8
    assert totals(kernels) == {"2MB": 2, "1GB": 0}
    lines = [x for x in out.getvalue().splitlines() if "hugepages made available" in x]
    assert lines == [
        "pagezero report: 8 2MB and 1 1GB hugepages made available for the faults study "
        "(7 added to the pools, given back when it ends)",
        "pagezero report: 8 2MB hugepages made available for the predict study "
        "(6 added to the pools, given back when it ends)",
    ]
    faults = run.sections[0]
    assert faults.body[-1].startswith("Hugepages: 8 2MB and 1 1GB hugepages made available")
    assert "Hugepages:" in (tmp_path / "r" / "report.md").read_text()


def test_the_pages_reserved_are_warmed_before_the_study_times_them(kernels, monkeypatch, tmp_path):
    # Freshly reserved pages are faulted in once, untimed, as --reserve does (a VM's host
    # faults guest memory in on its first touch): the faults and predict studies, not extents.
    kernels["2MB"].set(total=2, free=2)
    fake_studies(monkeypatch, {})
    report_pkg.run_report(str(tmp_path / "r"), scale="tiny")
    assert kernels["2MB"].warmed == [16 << 20, 16 << 20]  # 8 pages, for faults then predict
    assert kernels["1GB"].warmed == [1 << 30]


def test_nothing_written_when_the_pools_have_the_pages(kernels, monkeypatch, tmp_path):
    kernels["2MB"].set(total=8, free=8)
    kernels["1GB"].set(total=1, free=1)
    fake_studies(monkeypatch, {})
    out = io.StringIO()
    report_pkg.run_report(str(tmp_path / "r"), scale="tiny", progress=out)
    assert kernels["2MB"].writes == kernels["1GB"].writes == []
    assert kernels["2MB"].warmed == kernels["1GB"].warmed == []  # pages someone else had
    assert "hugepages made available" not in out.getvalue()


def test_a_failed_study_gives_its_pages_back(kernels, monkeypatch, tmp_path):
    seen = {}
    fake_studies(monkeypatch, seen, faults=MappingError(12, "no memory for the faults"))
    run = report_pkg.run_report(str(tmp_path / "r"), scale="tiny")
    assert seen["faults"] == FAULTS_NEED
    assert [s.title for s in run.failed] == ["faults"]
    assert totals(kernels) == {"2MB": 0, "1GB": 0}
    assert kernels["1GB"].writes == [1, 0]


def test_a_stop_signal_in_a_study_gives_its_pages_back(kernels, monkeypatch, tmp_path):
    fake_studies(monkeypatch, {}, faults=Interrupted(signal.SIGTERM))
    # Under the CLI's handlers, as `pagezero report` runs it: without them, reserve() took
    # SIGTERM over and would end this process with it once the pool is given back.
    with signals_interrupt():
        run = report_pkg.run_report(str(tmp_path / "r"), scale="tiny")
    assert run.interrupted == "SIGTERM" and run.not_run == ("extents", "predict")
    assert totals(kernels) == {"2MB": 0, "1GB": 0}


def test_where_memory_allows(kernels, monkeypatch, tmp_path):
    # The kernel finds no 1GB page (fragmented memory): the 2MB pages are still had.
    kernels["1GB"].limit = 0
    seen = {}
    fake_studies(monkeypatch, seen)
    out = io.StringIO()
    report_pkg.run_report(str(tmp_path / "r"), scale="tiny", progress=out)
    assert seen["faults"] == {"2MB": 8, "1GB": 0}
    (line,) = [x for x in out.getvalue().splitlines() if "faults study" in x]
    assert "8 2MB hugepages made available for the faults study" in line
    assert "1GB pages not reserved: asked the kernel for 1 more 1GB hugepages" in line
    assert totals(kernels) == {"2MB": 0, "1GB": 0}


def test_no_reserve_keeps_the_pools(kernels, monkeypatch, tmp_path, capsys):
    seen = {}
    fake_studies(monkeypatch, seen)
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    assert main(["report", "-o", str(tmp_path / "r"), "--no-reserve"]) == 0
    assert seen["faults"] == {"2MB": 0, "1GB": 0}
    assert kernels["2MB"].writes == kernels["1GB"].writes == []
    assert kernels["2MB"].warmed == kernels["1GB"].warmed == []  # pages someone else had
    assert "hugepages" not in capsys.readouterr().err


def test_not_root_one_line_says_what_to_run(kernels, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(report_pkg.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(hugepages.os, "geteuid", lambda: 1000)
    fake_studies(monkeypatch, {})
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    assert main(["report", "-o", str(tmp_path / "r")]) == 0
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "not root" in x]
    assert line.startswith("pagezero report: not root: the 2MB and 1GB fault sizes lack")
    assert f"echo 8 > {kernels['2MB'].dir}/nr_hugepages" in line
    assert f"echo 1 > {kernels['1GB'].dir}/nr_hugepages" in line
    assert kernels["2MB"].writes == kernels["1GB"].writes == []
    assert kernels["2MB"].warmed == kernels["1GB"].warmed == []  # pages someone else had


def test_reserve_asked_for_without_root_is_one_error_before_anything(
    kernels, monkeypatch, tmp_path, capsys
):
    monkeypatch.setattr(report_pkg.os, "geteuid", lambda: 1000)
    with pytest.raises(PagezeroError, match="reserving the report's 2MB and 1GB hugepages needs"):
        report_pkg.run_report(str(tmp_path / "r"), scale="tiny", reserve=True)
    assert not (tmp_path / "r").exists()
    # The command line: one line, exit 1 (the machine cannot do what was asked).
    monkeypatch.setenv("PAGEZERO_SCALE", "tiny")
    assert main(["report", "-o", str(tmp_path / "r"), "--reserve"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pagezero: error: reserving the report's") and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


# A real SIGTERM while a study holds the reserved pages: the CLI's handlers unwind it,
# the pools are given back, report.md is written, the status is 143.
HOLD_IN_A_STUDY = """
import sys, time
from helpers.fake_sysfs import FakeKernel
from pagezero.cli import main
from pagezero.studies import report
from pagezero.studies.report.cells import Section
from pagezero.system import hugepages
from pagezero.units import format_page

two = FakeKernel(sys.argv[1], create=False)
giga = FakeKernel(sys.argv[1], create=False, page_kb=1 << 20)
hugepages.SYSFS = sys.argv[1]
hugepages._write = lambda path, v: (giga if "1048576kB" in path else two).write(path, v)
hugepages.os.geteuid = lambda: 0

def faults(out_dir, cfg, info, functions, progress, **kwargs):
    print("holding", two.get("total"), giga.get("total"), flush=True)
    # Until the test's signal ends it, however late. Not signal.pause(): a signal landing
    # after the last check and before pause() would leave it waiting for another; a
    # short sleep ends, and the handler runs. Gives up after 5 minutes.
    for _ in range(3000):
        time.sleep(0.1)
    print("never signalled", flush=True)

def other(out_dir, cfg, info, functions, progress, **kwargs):
    return Section("other", ["| a |", "|---|", "| 1.5 |"], ["other 1.5."])

report.STUDIES = (("faults", "Faults", faults), ("other", "Other", other))
sys.exit(main(["report", "-o", sys.argv[2]]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_real_signal_gives_the_pages_back(tmp_path, sig):
    two, giga = FakeKernel(tmp_path, total=3, free=3), FakeKernel(tmp_path, page_kb=1 << 20)
    env = dict(os.environ, PAGEZERO_SCALE="tiny")
    out = tmp_path / "r"
    with start_python("-c", HOLD_IN_A_STUDY, str(tmp_path), str(out), env=env) as proc:
        line = read_line(proc).split()
        if line != ["holding", "8", "1"]:
            proc.kill()
            pytest.fail(f"the study did not hold the pages: {line} {finish(proc)[1]}")
        proc.send_signal(sig)
        _, err = finish(proc)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert (two.get("total"), giga.get("total")) == (3, 0)
    assert f"Interrupted by {signal.Signals(sig).name}" in (out / "report.md").read_text()


ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(hugepages.SYSFS + "/hugepages-2048kB"),
    reason="resizing a hugepage pool needs root and a 2MB pool",
)


@ROOT_ONLY
@pytest.mark.owns_hugepage_pools
def test_the_real_pools_are_as_they_were(monkeypatch, tmp_path):
    before = {p: x.total for p, x in hugepages.pools().items()}
    seen = {}
    fake_studies(monkeypatch, seen)
    out = io.StringIO()
    report_pkg.run_report(str(tmp_path / "r"), scale="tiny", progress=out)
    assert seen["faults"]["2MB"] >= FAULTS_NEED["2MB"], out.getvalue()
    # 1GB only where memory allows (one contiguous GB): else the line says why.
    if "1GB" in seen["faults"] and seen["faults"]["1GB"] < 1:
        assert "1GB pages not reserved" in out.getvalue()
    assert {p: x.total for p, x in hugepages.pools().items()} == before
