"""The store's history figure follows the figures' rules: the colour-blind-safe
palette, one colour per line, and a footer naming each machine's kernels and the
date drawn."""

import datetime

from pagezero.figures import common
from pagezero.figures.palette import PALETTE
from pagezero.store import history_footer, plot_history


def _row(machine, release, when, median):
    return {
        "set_id": 1,
        "measured_at": when,
        "machine_name": machine,
        "kernel_release": release,
        "pagezero_version": "0.1.0",
        "label": "memset default size=1GB",
        "unit": "bytes/sec",
        "median": median,
        "spread_pct": 2.0,
        "runs": 3,
        "spread_of": "runs",
    }


ROWS = [
    _row("zen4", "6.18.0", "2026-11-01T10:00:00", 40e9),
    _row("zen4", "7.0.0", "2026-11-02T10:00:00", 44e9),
    _row("milan", "6.18.0", "2026-11-01T11:00:00", 30e9),
]


def test_the_footer_names_each_machine_with_its_kernels_and_the_date():
    text = history_footer(ROWS)
    assert "zen4: Linux 6.18.0, 7.0.0" in text and "milan: Linux 6.18.0" in text
    assert text.endswith(f"drawn {datetime.date.today().isoformat()}")


def test_each_line_has_its_own_palette_colour_and_the_figure_its_footer(tmp_path, monkeypatch):
    seen = {}
    save = common.save

    def keep(fig, stem):
        seen["colours"] = [bars.lines[0].get_color() for bars in fig.axes[0].containers]
        seen["texts"] = [t.get_text() for t in fig.texts]
        return save(fig, stem)

    monkeypatch.setattr(common, "save", keep)
    paths = plot_history(ROWS, str(tmp_path / "history"))
    assert sorted(p.rsplit(".", 1)[1] for p in paths) == ["png", "svg"]
    colours = seen["colours"]
    assert len(colours) == 2 and len(set(colours)) == 2 and set(colours) <= set(PALETTE)
    assert history_footer(ROWS) in seen["texts"]
