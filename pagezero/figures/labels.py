"""Vertical marks on a figure's x axis, where the curves are expected to bend (the cache
sizes and the kernel's clearing batch sizes), with labels that never overlap: each label in
x order goes at the top of the panel and steps down until its box (the renderer's own) is
clear of those placed. Marks at one x (a 32MB LLC and Linux 7.0's 32MB batch) share one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pagezero.system.machine import cache_bytes, llc_bytes
from pagezero.units import format_size

# The batch of folio_zero_user() in "mm: folio_zero_user: clear contiguous pages"
# v6-v8 (2025), and as merged in Linux 7.0.
BATCHES = {"8MB batch": 8 << 20, "32MB batch": 32 << 20}

_STEP = 0.075  # axes fraction a label steps down per try


def threshold_marks(machine: Mapping[str, Any], measured: int | None = None) -> dict[str, int]:
    """The machine's cache sizes it reports, the cache measured where given (it differs from
    sysfs's LLC, as on a VM shown the socket's L3) and the clearing batch sizes: name to bytes."""
    marks = {
        "L1d": cache_bytes(machine, 1, "Data"),
        "L2": cache_bytes(machine, 2),
        "LLC" if measured is None else "LLC (sysfs)": llc_bytes(machine),
        **({"cache (measured)": measured} if measured else {}),
        **BATCHES,
    }
    return {n: x for n, x in marks.items() if x}


def mark_lines(ax: Any, marks: Mapping[str, int], label: bool = True) -> list[Any]:
    """Draw each mark inside the x range (bytes) as a vertical line; with `label` (the first of
    small multiples), its label too, kept apart from the others; returns the labels drawn."""
    lo, hi = ax.get_xlim()
    by_x: dict[int, list[str]] = {}
    for name, x in sorted(marks.items(), key=lambda m: m[1]):
        if lo <= x <= hi:
            by_x.setdefault(x, []).append(name)
    for x, names in by_x.items():
        style = ":" if all("batch" in n for n in names) else "--"
        ax.axvline(x, color="grey", linestyle=style, linewidth=0.8, zorder=0)
    if not label:
        return []
    renderer = ax.figure.canvas.get_renderer()
    texts: list[Any] = []
    to_axes = ax.transAxes.inverted()
    for x, names in by_x.items():
        # Right of its line, or left of it near the right edge, to stay inside.
        where = to_axes.transform(ax.transData.transform((x, 1)))[0]
        # "LLC 32MB = 32MB batch": a batch's name already says its size.
        words = " = ".join(n if "batch" in n else f"{n} {format_size(x)}" for n in names)
        text = ax.text(
            x,
            0.97,
            words,
            transform=ax.get_xaxis_transform(),
            ha="left" if where < 0.75 else "right",
            va="top",
            fontsize=7,
            color="dimgrey",
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
        )
        _step_clear(text, texts, renderer)
        texts.append(text)
    return texts


def _step_clear(text: Any, placed: Sequence[Any], renderer: Any) -> None:
    y = 0.97
    while y > 0.1:
        box = text.get_window_extent(renderer)
        if not any(box.overlaps(t.get_window_extent(renderer)) for t in placed):
            return
        y -= _STEP
        text.set_y(y)


def overlapping(texts: Sequence[Any], renderer: Any) -> list[tuple[str, str]]:
    """The strings of the pairs of visible texts whose boxes overlap (for the tests, and checks)."""
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts if t.get_visible()]
    return [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]
