"""`pagezero report`: the studies (STUDIES; sizes: SCALES) into a folder (docs/studies)."""

from __future__ import annotations

import datetime
import functools
import os
import signal
import time
from dataclasses import dataclass, field

from pagezero._core import PagezeroError
from pagezero.analysis.cache import INFO_KEY, run_cache
from pagezero.interrupt import as_interrupted, received
from pagezero.runs.processes import check_runs
from pagezero.runs.progress import NoProgress, Progress, format_duration
from pagezero.studies.report.advice import study_advice
from pagezero.studies.report.cells import Section, failure_text
from pagezero.studies.report.chunks import study_chunks
from pagezero.studies.report.cold import study_cold, study_threads
from pagezero.studies.report.estimate import measure_pace, study_seconds
from pagezero.studies.report.extents import study_extents
from pagezero.studies.report.faults import study_faults
from pagezero.studies.report.markdown import write_markdown
from pagezero.studies.report.pages import study_pages
from pagezero.studies.report.pools import (
    check_root_can_reserve,
    pools_for,
    report_needs,
    root_hint,
)
from pagezero.studies.report.predict import study_predict
from pagezero.studies.report.scales import SCALES
from pagezero.system.kernels import kernels
from pagezero.system.machine import machine, measured_cache_scope, set_measured_cache

__all__ = ["run_report", "ReportRun", "SCALES", "STUDIES"]

# (name, title if it fails before naming itself, study); run in this order.
STUDIES = (
    ("extents", "Kernels by extent", study_extents),
    ("chunks", "Chunk study", study_chunks),
    ("pages", "Page size", study_pages),
    ("cold", "Cold vs hot", study_cold),
    ("threads", "Several CPUs at once", study_threads),
    ("faults", "Page faults", study_faults),
    ("advice", "Advice", study_advice),
    ("predict", "Clearing policies", study_predict),
)

# What stops one study and not the report: no memory, a kernel the CPU lacks, no hugepages,
# a point refused, a sweep worker that died.
STUDY_FAILURES = (PagezeroError, OSError, ValueError, RuntimeError)


@dataclass
class ReportRun:
    """What run_report() did: folder, sections, stop signal, studies not run, seconds."""

    out_dir: str
    runs: int
    sections: list
    interrupted: str | None = None
    not_run: tuple = ()
    seconds: dict = field(default_factory=dict)  # each study's, by name, in the order run
    command: str = "pagezero report"  # the command line that runs it again

    @property
    def failed(self):
        """The sections of the studies that failed (each with its reason), in order."""
        return [s for s in self.sections if s.failed]


# The buffer the report's pace is measured over (estimate.measure_pace): beyond the cache.
PACE_BYTES = {"full": 256 << 20, "quick": 256 << 20, "tiny": 16 << 20}


def _estimates(names, cfg, info, functions, pace, quick):
    """Each study's seconds at `pace` (0 without one: no progress is shown)."""
    return {n: study_seconds(n, cfg, info, functions, pace, quick) if pace else 0.0 for n in names}


def run_report(out_dir=None, scale="full", functions=None, progress=None, reserve=None, runs=None):
    """Run the default study into `out_dir` (not one holding a report): report.md, summary.txt.

    Parameters
    ----------
    out_dir : str, optional
        A new folder, or an empty one (default: ``pagezero-report-DATE-TIME`` here).
    scale : {"full", "quick", "tiny"}
        The sizes (SCALES).
    functions : list of str, optional
        The clear kernels (default: every one this CPU can run).
    progress : file, optional
        Where each study's line, the time left and the hugepage lines go, or None (docs/studies).
    reserve : bool or None
        Reserve the hugepages the studies lack, around each (docs/studies); None: when root,
        False: the pools as they are.
    runs : int, optional
        Fresh processes per point (default: the scale's).

    Returns
    -------
    ReportRun
        The folder, the sections, the studies that failed or were not run.

    Raises
    ------
    ValueError
        For a bad scale, runs or reserve, or a folder holding a report.
    pagezero.PagezeroError
        With ``reserve=True`` when the pools lack pages and this process is not root.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown report scale {scale!r} (expected {', '.join(SCALES)})")
    if runs is not None:
        check_runs(runs)
    if reserve not in (None, True, False):
        raise ValueError(f"reserve must be True, False or None, not {reserve!r}")
    cfg = dict(SCALES[scale])
    cfg["runs"] = runs or cfg["runs"]
    quick = cfg["quick"]
    root = os.geteuid() == 0
    names = [name for name, _, _ in STUDIES]
    needs = report_needs(cfg, quick, names)
    if reserve and not root:
        check_root_can_reserve(needs)
    hint = root_hint(needs) if reserve is None and not root else None
    asked = reserve
    reserve = root if reserve is None else reserve
    if out_dir is None:
        out_dir = "pagezero-report-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if os.path.exists(os.path.join(out_dir, "report.md")):
        raise ValueError(f"{out_dir} already holds a report; choose another folder")
    os.makedirs(out_dir, exist_ok=True)

    info = machine()
    functions = list(functions) if functions else [k.name for k in kernels("clear") if k.available]
    run = ReportRun(out_dir, cfg["runs"], [], command=_command(scale, runs, asked))
    load = os.getloadavg()[0]  # other work on the machine skews every figure, threads most
    pace = measure_pace(PACE_BYTES[scale]) if progress is not None else None
    left = _estimates(names, cfg, info, functions, pace, quick)
    shown = NoProgress()
    if progress is not None:
        shown = Progress("pagezero report", sum(left.values()), progress, seconds_per_unit=1.0)
    start = time.monotonic()
    with shown, measured_cache_scope():
        runs_words = f"{cfg['runs']} run{'s' * (cfg['runs'] != 1)} per point"
        shown.say(
            f"{len(STUDIES)} studies at the {scale} scale, {runs_words}, into {out_dir}; about "
            f"{format_duration(sum(left.values()))} here (an estimate from their sizes and this "
            "machine's rates)"
        )
        if hint:
            shown.say(hint)
        # The sweeps' own progress: notes on the report's lines, or none.
        inner = False if isinstance(shown, NoProgress) else None
        for i, (name, title, study) in enumerate(STUDIES):
            began = time.monotonic()
            measure = functools.partial(study, out_dir, cfg, info, functions, inner)
            # Entered around the study only: its hugepages are had and given back there (the
            # studies that map them reserve none themselves).
            pools = pools_for(name, cfg, quick, reserve)
            shown.begin(f"[{i + 1}/{len(STUDIES)}] {name}", left[name])
            section = _run_study(title, measure, pools, shown)
            run.sections.append(section)
            run.seconds[name] = time.monotonic() - began
            if info.get(INFO_KEY):  # the later studies' eviction buffers exceed the cache measured
                set_measured_cache(run_cache(info).measured_instead_of_llc)
            # The studies left, estimated again from their own sizes (docs/studies).
            left = _estimates(names[i + 1 :], cfg, info, functions, pace, quick)
            shown.reestimate(run.seconds[name] + sum(left.values()))
            how = "failed" if section.failed else "stopped" if section.interrupted else "done"
            step = f"[{i + 1}/{len(STUDIES)}] {name} {how} in {format_duration(run.seconds[name])}"
            shown.step(step, run.seconds[name])
            if section.interrupted:
                run.interrupted = _signal_name(section.interrupted)
                run.not_run = tuple(names[i + 1 :])
                break
    try:
        write_markdown(run, info, scale, time.monotonic() - start, load)
    except KeyboardInterrupt as e:
        # A signal held while report.md was written: every study had finished.
        run.interrupted = run.interrupted or as_interrupted(e).signame
    return run


def _command(scale, runs, reserve):
    """The `pagezero report` command line that runs a report of these options again."""
    words = ["PAGEZERO_SCALE=tiny pagezero report" if scale == "tiny" else "pagezero report"]
    words += ["--quick"] * (scale == "quick") + [f"--runs {runs}"] * bool(runs)
    return " ".join(words + [{True: "--reserve", False: "--no-reserve"}.get(reserve, "")]).strip()


def _run_study(title, measure, pools, shown):
    """measure() in its Section, inside `pools` (the hugepages reserved for it, if any)."""
    line = None
    try:
        with pools as line:
            if line:
                shown.say(line)
            section = measure()
    except KeyboardInterrupt as e:
        section = Section(title, interrupted=as_interrupted(e).signame)
    except STUDY_FAILURES as e:
        section = Section(title, failed=failure_text(e))
    if line and section.body:
        section.body += ["", f"Hugepages: {line}."]
    return section


def _signal_name(mark):
    """A section's interrupted mark as a signal's name (True: the one last received)."""
    return mark if isinstance(mark, str) else signal.Signals(received() or signal.SIGINT).name
