"""summary.txt: the report's answers to paste into a patch mail, plain text of at most WIDTH
columns."""

import os
import textwrap

from pagezero.analysis.cache import run_cache
from pagezero.files import atomic_write
from pagezero.units import format_size

# A patch mail's width: the seeds' threads quote their results in 72 to 80 columns.
WIDTH = 72


def _wrap(text, indent=""):
    # A figure stays with its unit, a kernel's name (x86-64-sse2-nt) whole.
    kept = text.replace(" GB/s", "\0GB/s").replace(" ms", "\0ms")
    lines = textwrap.wrap(
        kept,
        WIDTH,
        initial_indent=indent,
        subsequent_indent=" " * len(indent),
        break_on_hyphens=False,
    )
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


def write_summary(run, info, when):
    """Write run.out_dir/summary.txt."""
    text = "\n".join(summary_text(run, info, when)) + "\n"
    atomic_write(os.path.join(run.out_dir, "summary.txt"), lambda f: f.write(text))
