"""report.md (answers first, then each study), report.html, and summary.txt for a patch mail."""

import datetime
import os
import re
import textwrap

from pagezero.analysis.cache import run_cache
from pagezero.files import atomic_write
from pagezero.interrupt import deferred
from pagezero.studies.report.html import anchor, write_html
from pagezero.system.machine import summary
from pagezero.units import format_size


def _status_lines(run):
    kept = "The other studies are kept."
    lines = [f'**The study "{s.title}" failed: {s.failed}. {kept}**' for s in run.failed]
    if run.interrupted:
        what = "this report covers only what was measured before it"
        lines.append(f"**Interrupted by {run.interrupted}: {what}.**")
    if run.not_run:
        lines.append(f"Not run: {', '.join(run.not_run)}.")
    return [x for line in lines for x in ("", line)]


# An answer's closing citation, "(advice table).", linked to its section.
_CITATION = re.compile(r"\((\w[\w ]* table)\)\.$")


def _linked(answer, title):
    """The answer with its closing "(... table)" linked to its section, or the section added."""
    link = f"#{anchor(title)}"
    cited = _CITATION.sub(lambda m: f"([{m[1]}]({link})).", answer)
    return cited if cited != answer else f"{answer.rstrip('.')} ([{title}]({link}))."


def summary_lines(sections):
    """The summary: the answers, linked to their sections, their rules once, then the rest."""
    answers = [f"- {_linked(answer, s.title)}" for s in sections for answer in s.answers]
    rules = [x for s in sections if s.answers for rule in s.rules for x in ("", rule)]
    rest = [f"- {line}" for s in sections for line in s.summary]
    if not answers:
        return ["", *rest]
    also = ["", "### Also found", "", *rest] if rest else []
    return ["", "### Answers", "", *answers, *rules, *also]


def write_markdown(run, info, scale, elapsed, load):
    """Write run.out_dir/report.md, report.html and summary.txt, stop signals held till done."""
    now = f"{datetime.datetime.now():%Y-%m-%d %H:%M}"
    runs = (
        f"1 run per point (scale `{scale}`): the spread between runs is unknown; "
        "`pagezero report --runs 3` measures it"
    )
    if run.runs > 1:
        runs = f"{run.runs} runs per point, each a fresh process; a cell is the median of the "
        runs += "runs' medians"
    with deferred():
        md = [
            f"# pagezero report: {info['cpu_model']}",
            "",
            f"{now}, scale `{scale}`, {elapsed:.0f} s of measuring, load average {load:.2f} at "
            f"the start (on {info['cpus_online']} CPUs); {runs}. Rates in GB/s (10^9 bytes/s).",
        ]
        md += _status_lines(run)
        md += ["", "## Summary"] + summary_lines(run.sections)
        md += ["", "## Machine", "", "```"] + summary(info) + ["```"]
        for s in run.sections:
            if s.body or s.failed:
                md += ["", f"## {s.title}", ""] + (s.body or [f"Failed: {s.failed}."])
        md += ["", "## Files", ""]
        names = {n for n in os.listdir(run.out_dir) if not n.startswith(".")}
        names |= {"report.html", "summary.txt"}
        md += [f"- `{name}`" for name in sorted(names)]
        md_text = "\n".join(md) + "\n"
        atomic_write(os.path.join(run.out_dir, "report.md"), lambda f: f.write(md_text))
        write_html(run.out_dir, md)
        text = "\n".join(summary_text(run, info, f"{now}, scale {scale}")) + "\n"
        atomic_write(os.path.join(run.out_dir, "summary.txt"), lambda f: f.write(text))


# A patch mail's width: the seeds' threads quote their results in 72 to 80 columns.
WIDTH = 72


def _wrap(text, indent=""):
    # A figure stays with its unit, a kernel's name (x86-64-sse2-nt) whole.
    kept = text.replace(" GB/s", "\0GB/s").replace(" ms", "\0ms")
    indents = dict(initial_indent=indent, subsequent_indent=" " * len(indent))
    lines = textwrap.wrap(kept, WIDTH, break_on_hyphens=False, **indents)
    return [line.replace("\0", " ") for line in lines]


def machine_line(info):
    """The machine in one line: CPU, kernel release, preemption model, the two caches."""
    cache = run_cache(info)
    measured = format_size(cache.cache_bytes) if cache.cache_bytes else "none"
    sysfs = format_size(cache.llc_bytes) if cache.llc_bytes else "none"
    return (
        f"{info['cpu_model']}, {info['kernel_release']}, preempt={info['preemption']['model']}, "
        f"LLC {sysfs} sysfs, {measured} measured"
    )


def summary_text(run, info, when):
    """summary.txt's lines (none over WIDTH): `when` is the report's date and scale."""
    lines = [*_wrap(machine_line(info)), *_wrap(f"pagezero report, {when}; GB/s = 10^9 bytes/s.")]
    for s in run.sections:
        if s.failed:
            lines += ["", *_wrap(f"{s.title}: failed: {s.failed}.")]
        if not s.answers:
            continue
        lines += ["", s.title]
        lines += [x for a in s.answers for x in _wrap(a, "- ")]
        if s.text:
            # A table a name made too wide is left to report.md, never wrapped into a mess.
            fits = max(map(len, s.text)) <= WIDTH
            lines += ["", *(s.text if fits else ["(its table: in report.md)"])]
        lines += [x for rule in s.rules for x in ["", *_wrap(rule)]]
    if run.interrupted:
        lines += ["", *_wrap(f"Interrupted by {run.interrupted}: only what was measured.")]
    return [*lines, "", "Measured with:", f"  {run.command}"]
