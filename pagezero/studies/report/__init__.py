"""`pagezero report`: the default study of this machine, as a folder.

One module per study (STUDIES, in the order run). The extents and chunk studies stand for
the kernel's own clearing, through its direct map's huge pages: their buffers are on 2MB
pages when this machine gives them (system.backing.kernel_backing); each heading says which.

The folder holds each study's results (JSON, loadable with pagezero.ResultSet.load), PNG and
SVG plots, report.md with the tables, the pictures and a summary in plain words whose every
figure is a cell of one of its tables (markdown.py), and report.html, the same as one
self-contained page (html.py). Sizes: SCALES.
"""

from __future__ import annotations

import datetime
import os
import signal
import time
from dataclasses import dataclass

from pagezero._core import PagezeroError
from pagezero.interrupt import as_interrupted, received
from pagezero.runs.processes import check_runs
from pagezero.studies.report.advice import study_advice
from pagezero.studies.report.cells import Section, failure_text
from pagezero.studies.report.chunks import study_chunks
from pagezero.studies.report.cold import study_cold
from pagezero.studies.report.extents import study_extents
from pagezero.studies.report.faults import study_faults
from pagezero.studies.report.markdown import write_markdown
from pagezero.studies.report.pages import study_pages
from pagezero.studies.report.predict import study_predict
from pagezero.studies.report.scales import SCALES
from pagezero.studies.report.threads import study_threads
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine

__all__ = ["run_report", "ReportRun", "SCALES", "STUDIES"]

# (name, title if it fails before naming itself, study); run in this order.
STUDIES = (
    ("extents", "Kernels by extent", study_extents),
    ("chunks", "Chunk study", study_chunks),
    ("pages", "Page size: 4KB against 2MB", study_pages),
    ("cold", "Cold vs hot", study_cold),
    ("threads", "Several CPUs at once", study_threads),
    ("faults", "Page faults: the kernel's own clearing", study_faults),
    ("advice", "Advice", study_advice),
    ("predict", "What a new clearing policy would gain here", study_predict),
)

# What stops one study and not the report: the machine cannot do it (no memory for a 1GB
# region, a kernel the CPU lacks, hugepages missing), a point it refuses, a sweep worker
# that died.
STUDY_FAILURES = (PagezeroError, OSError, ValueError, RuntimeError)


@dataclass
class ReportRun:
    """What run_report() did: its folder, sections, stop signal's name, studies not run."""

    out_dir: str
    runs: int
    sections: list
    interrupted: str | None = None
    not_run: tuple = ()

    @property
    def failed(self):
        """The sections of the studies that failed (each with its reason), in order."""
        return [s for s in self.sections if s.failed]


def _check(scale, runs):
    if scale not in SCALES:
        raise ValueError(f"unknown report scale {scale!r} (expected {', '.join(SCALES)})")
    if runs is not None:
        check_runs(runs)


def run_report(out_dir=None, scale="full", functions=None, progress=None, reserve=False, runs=None):
    """Run the default study into `out_dir` (not one holding a report) and write report.md."""
    # A study that fails is named with its reason and the others are kept; a stop signal ends
    # the study it lands in, and the report is written from what was measured. reserve: the
    # fault studies may grow the hugepage pools (root); runs: processes per point.
    _check(scale, runs)
    cfg = dict(SCALES[scale])
    cfg["runs"] = runs or cfg["runs"]
    if out_dir is None:
        out_dir = "pagezero-report-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if os.path.exists(os.path.join(out_dir, "report.md")):
        raise ValueError(f"{out_dir} already holds a report; choose another folder")
    os.makedirs(out_dir, exist_ok=True)

    info = machine()
    functions = list(functions) if functions else [k.name for k in kernels("clear") if k.available]
    extra = {
        "faults": {"reserve": reserve},
        "advice": {"quick": scale != "full"},
        "predict": {"reserve": reserve, "quick": scale != "full"},
    }
    run = ReportRun(out_dir, cfg["runs"], [])
    start = time.monotonic()
    load = os.getloadavg()[0]  # other work on the machine skews every figure, threads most
    for i, (name, title, study) in enumerate(STUDIES):
        try:
            section = study(out_dir, cfg, info, functions, progress, **extra.get(name, {}))
        except KeyboardInterrupt as e:
            section = Section(title, interrupted=as_interrupted(e).signame)
        except STUDY_FAILURES as e:
            section = Section(title, failed=failure_text(e))
        run.sections.append(section)
        if section.interrupted:
            run.interrupted = _signal_name(section.interrupted)
            run.not_run = tuple(n for n, _, _ in STUDIES[i + 1 :])
            break
    try:
        write_markdown(run, info, scale, time.monotonic() - start, load)
    except KeyboardInterrupt as e:
        # A signal held while report.md was written: every study had finished.
        run.interrupted = run.interrupted or as_interrupted(e).signame
    return run


def _signal_name(mark):
    """A section's interrupted mark as a signal's name (True: the one last received)."""
    if isinstance(mark, str):
        return mark
    return signal.Signals(received() or signal.SIGINT).name
