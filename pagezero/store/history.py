"""A point's history across result sets: as text, and as a plot of medians over time."""

import datetime

from pagezero.figures.common import closes_on_error, printable
from pagezero.figures.palette import MARKERS, PALETTE

__all__ = ["format_value", "format_spread", "format_history", "plot_history", "history_footer"]

# Beyond this many lines a plot is unreadable: the filters should narrow it.
MAX_SERIES = 12


def format_value(value, unit):
    """A stored median as text.

    Parameters
    ----------
    value : float
        The median.
    unit : str
        Its unit; ``"bytes/sec"`` is printed in GB/s (10^9 bytes/s).

    Returns
    -------
    str
        ``"12.34 GB/s"``, or four significant digits and the unit.
    """
    if unit == "bytes/sec":
        return f"{value / 1e9:.2f} GB/s"
    return f"{value:.4g} {unit}"


def format_spread(row):
    """A stored point's spread as text; the run is the unit.

    Parameters
    ----------
    row : dict
        A :meth:`pagezero.store.Store.history` row.

    Returns
    -------
    str
        ``"+-1.2% (3 runs)"``, or for one run ``"+-0.4% (loops, 1 run)"``.
    """
    if row["spread_of"] == "runs":
        return f"+-{row['spread_pct']:.1f}% ({row['runs']} runs)"
    return f"+-{row['spread_pct']:.1f}% (loops, 1 run)"


def _table(header, body):
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header] + body]


def format_history(rows):
    """A history as text.

    Parameters
    ----------
    rows : list of dict
        :meth:`pagezero.store.Store.history` rows.

    Returns
    -------
    list of str
        Per point its label, then one line per result set in time order: when, machine,
        kernel, pagezero version, median, spread and the set's id.
    """
    lines, by_label = [], {}
    for row in rows:
        by_label.setdefault(row["label"], []).append(row)
    for label, group in by_label.items():
        if lines:
            lines.append("")
        lines.append(label)
        body = [
            [
                r["measured_at"].replace("+00:00", "Z"),
                r["machine_name"],
                r["kernel_release"] or "?",
                r["pagezero_version"] or "?",
                format_value(r["median"], r["unit"]),
                format_spread(r),
                f"#{r['set_id']}",
            ]
            for r in group
        ]
        header = ["measured (UTC)", "machine", "kernel", "pagezero", "median", "spread", "set"]
        lines += ["  " + line for line in _table(header, body)]
    return lines


@closes_on_error
def plot_history(rows, stem):
    """Plot a history: each point's median per result set over time.

    One line per point and machine, the spread as error bars.

    Parameters
    ----------
    rows : list of dict
        :meth:`pagezero.store.Store.history` rows (not empty).
    stem : str
        The files' path without extension: ``stem.png`` and ``stem.svg`` are written.

    Returns
    -------
    list of str
        The files written.

    Raises
    ------
    ValueError
        When more than 12 point and machine pairs match: the filters should narrow it.
    """
    from pagezero.figures.common import pyplot as _pyplot
    from pagezero.figures.common import save as _save

    series = {}
    for row in rows:
        series.setdefault((row["label"], row["machine_name"]), []).append(row)
    if len(series) > MAX_SERIES:
        raise ValueError(
            f"{len(series)} points and machines match; a plot shows at most "
            f"{MAX_SERIES}: narrow the filters (--function, --size, --page, ...)"
        )
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    unit = rows[0]["unit"]
    scale = 1e9 if unit == "bytes/sec" else 1.0
    # The figures' colour-blind-safe palette and markers, one per line in a fixed
    # order (machine, then point), so a machine keeps its colour as sets are added.
    for i, ((label, machine), group) in enumerate(sorted(series.items(), key=lambda s: s[0][::-1])):
        when = [datetime.datetime.fromisoformat(r["measured_at"]) for r in group]
        medians = [r["median"] / scale for r in group]
        errors = [m * r["spread_pct"] / 100 for m, r in zip(medians, group)]
        ax.errorbar(
            when,
            medians,
            yerr=errors,
            marker=MARKERS[i % len(MARKERS)],
            color=PALETTE[i % len(PALETTE)],
            capsize=3,
            label=printable(f"{machine}: {label}"),
        )
    ax.set_ylabel("median rate (GB/s, 10^9 bytes/s)" if unit == "bytes/sec" else unit)
    ax.set_xlabel("measured (UTC)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(
        "History of stored points; error bars: spread between runs (one run: between its loops)",
        fontsize=10,
    )
    fig.autofmt_xdate()
    fig.text(0.01, 0.005, history_footer(rows), fontsize=7, color="dimgrey", va="bottom")
    return _save(fig, stem)


def history_footer(rows):
    """The history figure's footer: each machine with its kernel releases, and the date drawn.

    Parameters
    ----------
    rows : list of dict
        :meth:`pagezero.store.Store.history` rows.

    Returns
    -------
    str
    """
    releases = {}
    for r in rows:
        kept = releases.setdefault(r["machine_name"], [])
        if r["kernel_release"] not in kept:
            kept.append(r["kernel_release"])
    machines = "; ".join(f"{m}: Linux {', '.join(map(str, rs))}" for m, rs in releases.items())
    return printable(f"{machines}; drawn {datetime.date.today().isoformat()}")
