"""What every figure shares: the backend, the files, the footer naming the machine,
and the words for the one statistic every figure draws.

The statistic is pagezero.results.points.point_summary's, the one the report's tables and
`pagezero compare` give: the median of per-run medians, its interval the spread
of the runs' medians (a run is one fresh process: DESIGN.md, "the run is the
unit"). With one run there is no spread between runs; a figure of one run says
so and draws the spread of its loops instead.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

__all__ = [
    "pyplot",
    "save",
    "footer_text",
    "add_footer",
    "statistic_words",
    "interval",
    "pages_of",
    "printable",
    "missing_glyphs_drawn",
    "STATISTIC",
]

STATISTIC = "median of per-run medians"


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend: files only, no display needed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, stem: str) -> list[str]:
    """Write `stem`.png (for mail) and `stem`.svg (for the HTML page), and close.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    stem : str
        The path without extension; its folder is created.

    Returns
    -------
    list of str
        The two paths.
    """
    import matplotlib

    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    paths = []
    try:
        for ext in ("png", "svg"):
            path = f"{stem}.{ext}"
            # svg.hashsalt: the SVG's element ids are the same on every drawing, so a
            # page holding several figures never depends on chance to keep them apart.
            with matplotlib.rc_context({"svg.hashsalt": os.path.basename(stem)}):
                with missing_glyphs_drawn(), warnings.catch_warnings():
                    # Labels too long for the figure (a results file may name its
                    # kernel anything) leave the layout as it was: the figure is
                    # still written, and a warning would only repeat that.
                    warnings.filterwarnings("ignore", "constrained_layout not applied")
                    fig.savefig(path, dpi=110, bbox_inches="tight")
            paths.append(path)
    finally:
        pyplot().close(fig)
    return paths


_Builder = TypeVar("_Builder", bound=Callable[..., Any])


def closes_on_error(build: _Builder) -> _Builder:
    """A figure builder that closes the figures it opened when it fails half way.

    pyplot keeps every figure until it is closed, and a long process that meets
    data it cannot draw (a report, a test session, a notebook) would pile them up
    until matplotlib warns, past 20.
    """

    @functools.wraps(build)
    def building(*args: Any, **kwargs: Any) -> Any:
        plt = pyplot()
        before = set(plt.get_fignums())
        try:
            return build(*args, **kwargs)
        except BaseException:
            for number in set(plt.get_fignums()) - before:
                plt.close(number)
            raise

    return cast(_Builder, building)


@contextlib.contextmanager
def missing_glyphs_drawn() -> Any:
    """Draw a character the font lacks as its box, without matplotlib's warning: a
    results file's names are drawn as given, in any script."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from font")
        yield


def printable(text: object) -> str:
    """`text` with its control characters as "?": a results file's names and machine
    facts are drawn as given, and a font has no glyph for a control character.

    Parameters
    ----------
    text : object
        Any value; drawn as its str().

    Returns
    -------
    str
    """
    return "".join(c if c.isprintable() else "?" for c in str(text))


def pages_of(results: Iterable[Any]) -> str:
    """The pages the results' buffers were on, in words ("2MB", "4KB + THP").

    Parameters
    ----------
    results : iterable of pagezero.Result

    Returns
    -------
    str
        The page sizes, joined; "4KB" when none is recorded (the default).
    """
    seen: list[str] = []
    for r in results:
        page = str(r.params.get("page") or "4KB")
        label = page + (" + THP" if r.params.get("thp") else "")
        if label not in seen:
            seen.append(label)
    return ", ".join(seen) or "4KB"


def footer_text(machine: Mapping[str, Any], pages: str) -> str:
    """The footer of a figure: the machine, the kernel, the pages and the date drawn.

    Parameters
    ----------
    machine : dict
        A result set's machine (:func:`pagezero.system.machine.machine`).
    pages : str
        The pages measured on, in words.

    Returns
    -------
    str
    """
    cpu = machine.get("cpu_model") or "unknown CPU"
    host = machine.get("hostname") or "?"
    release = machine.get("kernel_release") or "?"
    return printable(
        f"{cpu} ({host}), Linux {release}, pages: {pages}, "
        f"drawn {datetime.date.today().isoformat()}"
    )


def add_footer(fig: Any, machine: Mapping[str, Any], pages: str) -> Any:
    """Write :func:`footer_text` under the figure; returns the text artist."""
    # Below the figure's box, which constrained layout keeps every axis label inside.
    return fig.text(
        0.01, -0.005, footer_text(machine, pages), fontsize=7, color="dimgrey", va="top"
    )


def statistic_words(summaries: Iterable[Mapping[str, Any]]) -> str:
    """What a figure's values and intervals are, for its axis label or caption.

    Parameters
    ----------
    summaries : iterable of dict
        The drawn points' :func:`pagezero.results.points.point_summary`.

    Returns
    -------
    str
        The median of per-run medians and the between-run interval with the run
        count; with one run, that it is one run and the interval its loops'. Two
        lines, to fit beside an axis.
    """
    runs = [s["runs"] for s in summaries]
    if runs and min(runs) > 1:
        n = f"{min(runs)}" if min(runs) == max(runs) else f"{min(runs)}-{max(runs)}"
        return f"{STATISTIC} of {n} runs;\ninterval: spread between runs"
    return "one run: its median; interval: its loops' spread\n(the spread between runs is unknown)"


def interval(summary: Mapping[str, Any]) -> tuple[float, float]:
    """A point's interval: its median less and plus its spread, in its unit.

    Parameters
    ----------
    summary : dict
        A :func:`pagezero.results.points.point_summary`.

    Returns
    -------
    tuple of float
        (low, high).
    """
    d = summary["median"] * summary["spread_pct"] / 100
    return summary["median"] - d, summary["median"] + d
