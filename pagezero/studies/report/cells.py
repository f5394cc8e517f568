"""The shape every study shares: measure, save, table, figure (docs/measuring.rst)."""

import contextlib
import json
import os
from dataclasses import dataclass, field

from pagezero.files import atomic_write
from pagezero.interrupt import as_interrupted, deferred
from pagezero.results.points import summarize_points
from pagezero.runs.sweeps import sweep_points


@dataclass
class Section:
    """One study's part of the report: body, answers, rules, summary.txt's table, stop, failure."""

    title: str
    body: list = field(default_factory=list)
    summary: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    text: list = field(default_factory=list)
    interrupted: object = None
    failed: str | None = None


@contextlib.contextmanager
def holding(section):
    """Stop signals held while a study saves and tabulates: one marks `section` interrupted."""
    try:
        with deferred():
            yield section
    except KeyboardInterrupt as e:
        section.interrupted = section.interrupted or as_interrupted(e).signame


def finish(section, out_dir, name, rs, tabulate, plot=None, notes=(), **plot_args):
    """A study's tail: `rs` saved as name.json, tabulated, `notes` listed, drawn."""
    with holding(section):
        rs.save(os.path.join(out_dir, f"{name}.json"))
        if len(rs):
            tabulate()
        if notes:
            section.body += [""] + [f"- {n}" for n in notes]
    try:  # a stop signal while drawing marks the section interrupted and keeps its tables
        if plot is not None and len(rs):
            plot(rs, os.path.join(out_dir, name), **plot_args)
    except KeyboardInterrupt as e:
        section.interrupted = as_interrupted(e).signame
    return section


def sweep_study(
    out_dir, name, heading, cfg, progress, points, tabulate, benchmark="memset", **figure
):
    """A study's shape: its points swept in cfg's runs, then finish() with tabulate(section, rs)."""
    notes = []
    rs = sweep_points(benchmark, points, cfg["runs"], cfg["warmup"], progress, notes)
    section = Section(heading, interrupted=rs.interrupted)
    return finish(section, out_dir, name, rs, lambda: tabulate(section, rs), notes=notes, **figure)


def save_json(section, path, doc, tabulate):
    """As finish() for a study whose results are a JSON document: saved, then tabulated."""
    with holding(section):
        atomic_write(path, lambda f: json.dump(doc, f, indent=1))
        tabulate()
    return section


def failure_text(e):
    """An exception in one line, for the reader: its type and its message."""
    text = getattr(e, "strerror", None) if isinstance(e, OSError) else None
    return f"{type(e).__name__}: {text or e}"


def cells(rs, x):
    """{function: {x(result): point_summary, with the point's size}} of a result set."""
    table = {}
    for first, summary in summarize_points(rs).values():
        cell = dict(summary, size=first.params.get("size"))
        table.setdefault(first.function, {})[x(first)] = cell
    return table
