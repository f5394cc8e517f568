"""report.md: the header, the summary (the answers first), the machine, each study's section,
what failed or was not run, the files; report.html and summary.txt beside it."""

import datetime
import os
import re

from pagezero.files import atomic_write
from pagezero.interrupt import deferred
from pagezero.studies.report.html import anchor, write_html
from pagezero.studies.report.plaintext import write_summary
from pagezero.system.machine import summary


def _runs_words(runs, scale):
    if runs > 1:
        cell = "a cell is the median of the runs' medians"
        return f"{runs} runs per point, each a fresh process; {cell}"
    return (
        f"1 run per point (scale `{scale}`): the spread between runs is unknown; "
        f"`pagezero report --runs 3` measures it"
    )


def _status_lines(run):
    lines = [
        f'**The study "{s.title}" failed: {s.failed}. The other studies are kept.**'
        for s in run.sections
        if s.failed
    ]
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
    """Write run.out_dir/report.md and report.html, stop signals held until both are."""
    with deferred():
        _write(run, info, scale, elapsed, load)


def _write(run, info, scale, elapsed, load):
    md = [f"# pagezero report: {info['cpu_model']}", ""]
    md.append(
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}, scale `{scale}`, "
        f"{elapsed:.0f} s of measuring, load average {load:.2f} at the start "
        f"(on {info['cpus_online']} CPUs); {_runs_words(run.runs, scale)}. "
        f"Rates in GB/s (10^9 bytes/s)."
    )
    md += _status_lines(run)
    md += ["", "## Summary"] + summary_lines(run.sections)
    md += ["", "## Machine", "", "```"] + summary(info) + ["```"]
    for s in run.sections:
        if s.body or s.failed:
            md += ["", f"## {s.title}", ""] + (s.body or [f"Failed: {s.failed}."])
    md += ["", "## Files", ""]
    names = {n for n in os.listdir(run.out_dir) if not n.startswith(".")} | {
        "report.html",
        "summary.txt",
    }
    md += [f"- `{name}`" for name in sorted(names)]
    atomic_write(os.path.join(run.out_dir, "report.md"), lambda f: f.write("\n".join(md) + "\n"))
    write_html(run.out_dir, md)
    write_summary(run, info, f"{datetime.datetime.now():%Y-%m-%d %H:%M}, scale {scale}")
