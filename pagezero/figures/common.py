"""What every figure shares: backend, files, the machine's footer, the statistic's words."""

from __future__ import annotations

import contextlib
import datetime
import functools
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

from pagezero.analysis.compare import span

STATISTIC = "median of per-run medians"
RATE_AXIS = "rate (GB/s, 10^9 bytes/s)"
# Right of the panel.
_LEGEND = {"fontsize": 8, "loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "frameon": False}

_Builder = TypeVar("_Builder", bound=Callable[..., Any])


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend: files only, no display needed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, stem: str) -> list[str]:
    """Write `stem`.png (for mail) and `stem`.svg (for the HTML page), close `fig`; the paths."""
    import matplotlib

    os.makedirs(os.path.dirname(os.path.abspath(stem)), exist_ok=True)
    paths = [f"{stem}.png", f"{stem}.svg"]
    # svg.hashsalt: the SVG's element ids are the same on every drawing, so a page holding
    # several figures never depends on chance to keep them apart.
    salt = matplotlib.rc_context({"svg.hashsalt": os.path.basename(stem)})
    try:
        with salt, missing_glyphs_drawn(), warnings.catch_warnings():
            # Labels too long for the figure (a file's kernel names) leave the layout: still saved.
            warnings.filterwarnings("ignore", "constrained_layout not applied")
            for path in paths:
                fig.savefig(path, dpi=110, bbox_inches="tight")
    finally:
        pyplot().close(fig)
    return paths


def closes_on_error(build: _Builder) -> _Builder:
    """A figure builder that closes the figures it opened if it fails: pyplot keeps them open."""

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
    """Draw a character the font lacks as its box, unwarned: a file's names are in any script."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from font")
        yield


def printable(text: object) -> str:
    """str(text) with its control characters as "?": a font has no glyph for them."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def pages_of(results: Iterable[Any]) -> str:
    """The pages the results' buffers were on, in words ("2MB", "4KB + THP"); "4KB" by default."""
    thp = {True: " + THP", False: ""}
    seen = (str(r.params.get("page") or "4KB") + thp[bool(r.params.get("thp"))] for r in results)
    return ", ".join(dict.fromkeys(seen)) or "4KB"


def footer_text(machine: Mapping[str, Any], pages: str) -> str:
    """The footer of a figure: the machine, the kernel, the pages and the date drawn."""
    cpu, host = machine.get("cpu_model") or "unknown CPU", machine.get("hostname") or "?"
    release, today = machine.get("kernel_release") or "?", datetime.date.today().isoformat()
    return printable(f"{cpu} ({host}), Linux {release}, pages: {pages}, drawn {today}")


def finish(
    fig: Any, ax: Any, title: str, machine: Mapping[str, Any], pages: str, grid: str = "y"
) -> Any:
    """A one-panel figure's legend, grid, title and footer; returns `fig`."""
    legend(ax)
    ax.grid(True, axis=grid, alpha=0.3)
    ax.set_title(title, fontsize=11)
    add_footer(fig, machine, pages)
    return fig


def legend(ax: Any) -> None:
    """The legend, one entry per name that shows (matplotlib hides names starting with "_")."""
    handles, names = ax.get_legend_handles_labels()
    unique = dict(zip(names, handles))
    if unique:
        ax.legend(unique.values(), unique.keys(), **_LEGEND)


def add_footer(fig: Any, machine: Mapping[str, Any], pages: str) -> None:
    """Write footer_text() below the figure's box, which constrained layout keeps labels inside."""
    fig.text(0.01, -0.005, footer_text(machine, pages), fontsize=7, color="dimgrey", va="top")


def statistic_words(summaries: Iterable[Mapping[str, Any]]) -> str:
    """Two lines saying what the drawn points' values and intervals are (their point_summary())."""
    runs = [s["runs"] for s in summaries]
    if runs and min(runs) > 1:
        return f"{STATISTIC} of {span(runs)} runs;\ninterval: spread between runs"
    return "one run: its median; interval: its loops' spread\n(the spread between runs is unknown)"


def interval(summary: Mapping[str, Any]) -> tuple[float, float]:
    """A point_summary()'s (low, high): its median less and plus its spread."""
    d = summary["median"] * summary["spread_pct"] / 100
    return summary["median"] - d, summary["median"] + d
