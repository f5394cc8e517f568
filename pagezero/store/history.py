"""A point's history across result sets: as text, and as a plot of medians over time."""

import datetime

from pagezero.figures.common import closes_on_error, printable
from pagezero.figures.palette import MARKERS, PALETTE

__all__ = ["format_value", "format_history", "plot_history", "history_footer"]

# Beyond this many lines a plot is unreadable: the filters should narrow it.
MAX_SERIES = 12


def format_value(value, unit):
    """A median as text: ``"12.34 GB/s"`` (10^9 bytes/s), else 4 digits and the unit."""
    if unit == "bytes/sec":
        return f"{value / 1e9:.2f} GB/s"
    return f"{value:.4g} {unit}"


# The columns of a point's history, one row a result set (here and in store publish).
HEADER = ["measured (UTC)", "machine", "kernel", "pagezero", "median", "spread", "set"]


def history_cells(r):
    """A history row's cells under HEADER, its spread as ``+-1.2% (3 runs)``."""
    when, version = r["measured_at"].replace("+00:00", "Z"), r["pagezero_version"] or "?"
    of = f"{r['runs']} runs" if r["spread_of"] == "runs" else "loops, 1 run"
    spread = f"+-{r['spread_pct']:.1f}% ({of})"
    value = format_value(r["median"], r["unit"])
    return [when, r["machine_name"], r["kernel_release"] or "?", version, value, spread]


def by_point(rows):
    """History rows as ``[(label, rows)]``, a pair per point, in the rows' order."""
    points = {}
    for row in rows:
        points.setdefault((row["label"], row["unit"]), []).append(row)
    return [(label, group) for (label, _), group in points.items()]


def format_history(rows):
    """:meth:`pagezero.store.Store.history` rows as lines: per point its label, then a
    line per result set."""
    lines = []
    for label, group in by_point(rows):
        lines += ([""] if lines else []) + [label]
        table = [HEADER] + [history_cells(r) + [f"#{r['set_id']}"] for r in group]
        widths = [max(len(r[i]) for r in table) for i in range(len(HEADER))]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in table]
    return lines


@closes_on_error
def plot_history(rows, stem):
    """Plot :meth:`pagezero.store.Store.history` rows to ``stem.png`` and ``stem.svg``, a line
    per point and machine; the files written. ValueError beyond MAX_SERIES lines."""
    from pagezero.figures.common import pyplot, save

    series = {}
    for row in rows:
        series.setdefault((row["label"], row["machine_name"]), []).append(row)
    if len(series) > MAX_SERIES:
        raise ValueError(
            f"{len(series)} points and machines match; a plot shows at most "
            f"{MAX_SERIES}: narrow the filters (--function, --size, --page, ...)"
        )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    unit = rows[0]["unit"]
    scale = 1e9 if unit == "bytes/sec" else 1.0
    # In a fixed order (machine, then point): a machine keeps its colour as sets are added.
    for i, ((label, machine), group) in enumerate(sorted(series.items(), key=lambda s: s[0][::-1])):
        when = [datetime.datetime.fromisoformat(r["measured_at"]) for r in group]
        medians = [r["median"] / scale for r in group]
        errors = [m * r["spread_pct"] / 100 for m, r in zip(medians, group)]
        style = dict(marker=MARKERS[i % len(MARKERS)], color=PALETTE[i % len(PALETTE)], capsize=3)
        ax.errorbar(when, medians, yerr=errors, label=printable(f"{machine}: {label}"), **style)
    ax.set_ylabel("median rate (GB/s, 10^9 bytes/s)" if unit == "bytes/sec" else unit)
    ax.set_xlabel("measured (UTC)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    title = "History of stored points; error bars: spread between runs (one run: between its loops)"
    ax.set_title(title, fontsize=10)
    fig.autofmt_xdate()
    fig.text(0.01, 0.005, history_footer(rows), fontsize=7, color="dimgrey", va="bottom")
    return save(fig, stem)


def history_footer(rows):
    """The history figure's footer: each machine with its kernel releases, and the date."""
    releases = {}
    for r in rows:  # a dict for an ordered set
        releases.setdefault(r["machine_name"], {})[r["kernel_release"]] = None
    machines = "; ".join(f"{m}: Linux {', '.join(map(str, rs))}" for m, rs in releases.items())
    return printable(f"{machines}; drawn {datetime.date.today().isoformat()}")
