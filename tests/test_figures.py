"""The figures' rules, checked on the figure objects: one statistic named on
every figure (one run said so), kernels in families from the registry's facts,
one fixed colour per kernel in every figure, labels whose boxes never overlap,
the machine in the footer, and bars equal to the report's table cells."""

import datetime

import pytest
from figure_data import KB, MACHINE, MB, extents_set, names, point, result_set

from pagezero.figures import bars_figure, comparison_figure, rates_figure
from pagezero.figures.common import STATISTIC
from pagezero.figures.palette import (
    FAMILIES,
    PALETTE,
    family_of,
    kernel_colour,
    kernel_family,
    registry_names,
)
from pagezero.figures.plots import ENVELOPE_LABEL, mark_lines, overlapping
from pagezero.results.points import summarize_points
from pagezero.system.kernels import kernels
from pagezero.units import GBPS


@pytest.fixture(scope="module")
def three_runs():
    return extents_set(runs=3)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    from pagezero.figures.common import pyplot

    pyplot().close("all")


def lines_by_label(fig):
    return {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}


def label_texts(fig):
    return [t for ax in fig.axes for t in ax.texts]


# The statistic ------------------------------------------------------------------


def test_rates_name_the_statistic_and_the_run_count(three_runs):
    fig = rates_figure(three_runs)
    label = fig.get_supylabel()
    assert STATISTIC in label and "3 runs" in label and "spread between runs" in label


def test_one_run_says_so():
    fig = rates_figure(extents_set(runs=1, functions=names()[:2]))
    label = fig.get_supylabel()
    assert "one run" in label and "between runs is unknown" in label
    assert STATISTIC not in label


def test_each_line_is_the_median_of_per_run_medians(three_runs):
    fig = rates_figure(three_runs)
    lines = lines_by_label(fig)
    for first, s in summarize_points(three_runs).values():
        line = lines[first.function]
        xs = list(line.get_xdata())
        y = line.get_ydata()[xs.index(first.params["size"])]
        assert y == pytest.approx(s["median"] / GBPS)


def test_bars_are_the_table_cells_and_name_the_statistic():
    # The fault study's figure and table: both from one point_summary.
    rs = result_set(
        [
            point("demand", 64 * MB, 9e9, 3, benchmark="mmap", seed=1),
            point("populate", 64 * MB, 7e9, 3, benchmark="mmap", seed=2),
        ]
    )
    fig = bars_figure(rs, label=lambda r: r.function)
    [ax] = fig.axes
    heights = [p.get_height() for p in ax.patches]
    medians = [s["median"] / GBPS for _, s in summarize_points(rs).values()]
    assert heights == pytest.approx(medians)
    assert STATISTIC in ax.get_ylabel() and "spread between runs" in ax.get_ylabel()


def test_comparison_names_the_statistic(three_runs):
    small = extents_set(runs=3, functions=names()[:2])
    fig = comparison_figure([small, small], ["a", "b"])
    assert STATISTIC in fig.axes[0].get_ylabel()


# Families and colours ---------------------------------------------------------


@pytest.mark.parametrize("kernel", kernels("clear"), ids=lambda k: k.name)
def test_families_come_from_the_registrys_facts(kernel):
    family = kernel_family(kernel)
    assert family in FAMILIES and family_of(kernel.name) == family
    if kernel.zero_only:
        assert family == "whole-line"
    elif not kernel.temporal:
        assert family == "non-temporal"
    else:
        assert family.startswith("temporal")


def test_a_name_not_in_the_registry_is_other():
    assert family_of("no-such-kernel") == "other"


def test_one_panel_per_family_sharing_both_axes(three_runs):
    fig = rates_figure(three_runs)
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    families = {family_of(n) for n in names()}
    assert {ax.get_title(loc="left") for ax in panels} == families
    first = panels[0]
    for ax in panels[1:]:
        assert first.get_shared_x_axes().joined(first, ax)
        assert first.get_shared_y_axes().joined(first, ax)
    for ax in panels:
        kernels_drawn = {ln.get_label() for ln in ax.get_lines()} - {ENVELOPE_LABEL}
        kernels_drawn = {k for k in kernels_drawn if not k.startswith("_")}
        assert {family_of(k) for k in kernels_drawn} == {ax.get_title(loc="left")}


def test_the_fastest_envelope_is_in_every_panel(three_runs):
    fig = rates_figure(three_runs)
    best = {}
    for first, s in summarize_points(three_runs).values():
        x = first.params["size"]
        best[x] = max(best.get(x, 0), s["median"] / GBPS)
    for ax in fig.axes:
        if not ax.get_title(loc="left"):
            continue
        [env] = [ln for ln in ax.get_lines() if ln.get_label() == ENVELOPE_LABEL]
        assert list(env.get_ydata()) == pytest.approx([best[x] for x in sorted(best)])


def test_colours_are_fixed_per_kernel_from_the_registry():
    order = registry_names()
    for i, name in enumerate(order):
        assert kernel_colour(name) == PALETTE[i % len(PALETTE)]
    clear = [k.name for k in kernels("clear")]
    if len(clear) <= len(PALETTE):
        assert len({kernel_colour(n) for n in clear}) == len(clear)
    assert kernel_colour("demand") == kernel_colour("demand")  # stable for any name


def test_a_kernel_has_its_colour_in_every_figure(three_runs):
    few = names()[-2:]  # drawn alone, still in the registry's colours
    for fig in (rates_figure(three_runs), rates_figure(extents_set(3, functions=few))):
        for label, line in lines_by_label(fig).items():
            if label in names():
                assert line.get_color() == kernel_colour(label)
    small = result_set([point(n, 1 * MB, 5e9, 3) for n in few])
    fig = bars_figure(small)
    for patch, name in zip(fig.axes[0].patches, few):
        assert patch.get_facecolor()[:3] == pytest.approx(_rgb(kernel_colour(name)))


def _rgb(hex_colour):
    return tuple(int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))


# Labels -----------------------------------------------------------------------


def test_the_mark_labels_do_not_overlap(three_runs):
    fig = rates_figure(three_runs)
    texts = label_texts(fig)
    words = [t.get_text() for t in texts]
    assert any("LLC" in w and "32MB batch" in w for w in words)  # one label at one x
    assert any(w.startswith("L1d") for w in words) and any(w.startswith("L2") for w in words)
    assert overlapping(texts, fig.canvas.get_renderer()) == []


def test_a_measured_cache_is_marked_beside_sysfss_llc(three_runs):
    # An Intel Xeon VM: sysfs shows the socket's L3, the run was measured to have 4MB (the
    # figure data's extents reach 64MB).
    words = [t.get_text() for t in label_texts(rates_figure(three_runs, cache_bytes=4 * MB))]
    assert "cache (measured) 4MB" in words
    assert any(w.startswith("LLC (sysfs)") for w in words)
    assert not any(w.startswith("LLC ") and "sysfs" not in w for w in words)


@pytest.mark.parametrize("l2", [6 * MB, 7 * MB, 9 * MB])
def test_close_marks_are_nudged_apart(l2):
    # An L2 just beside the 8MB batch: their labels would print over each other.
    machine = dict(
        MACHINE, caches=[*MACHINE["caches"][:1], {"level": 2, "type": "Unified", "size_bytes": l2}]
    )
    fig = rates_figure(extents_set(runs=1, functions=names()[:1], machine=machine))
    texts = label_texts(fig)
    assert len(texts) >= 4
    assert overlapping(texts, fig.canvas.get_renderer()) == []


def test_overlapping_finds_an_overlap():
    from pagezero.figures.common import pyplot

    fig, ax = pyplot().subplots()
    ax.set_xscale("log", base=2)
    ax.set_xlim(4 * KB, 256 * MB)
    a = ax.text(1 * MB, 0.5, "L2 1MB", transform=ax.get_xaxis_transform())
    b = ax.text(1 * MB, 0.5, "L2 1MB", transform=ax.get_xaxis_transform())
    assert overlapping([a, b], fig.canvas.get_renderer()) == [("L2 1MB", "L2 1MB")]
    texts = mark_lines(ax, {"L2": 1 * MB, "x": 1 * MB + 1, "y": 1 * MB + 2})
    assert overlapping(texts, fig.canvas.get_renderer()) == []


# Footer, files ------------------------------------------------------------------


def test_the_footer_names_machine_kernel_pages_and_date(three_runs):
    fig = rates_figure(three_runs)
    footer = " ".join(t.get_text() for t in fig.texts)
    for fact in ("Test CPU 9000", "testbox", "6.99.0-test", "pages: 2MB"):
        assert fact in footer
    assert datetime.date.today().isoformat() in footer


def test_png_for_mail_and_svg_for_the_page(three_runs, tmp_path):
    from pagezero.figures import plot_rates

    paths = plot_rates(three_runs, str(tmp_path / "x" / "extents"))
    assert [p.rsplit(".", 1)[1] for p in paths] == ["png", "svg"]
    with open(paths[0], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(paths[1]) as f:
        svg = f.read()
    assert "<svg" in svg and "http://www.w3.org/2000/svg" in svg


def test_the_fault_table_and_figure_give_one_statistic_and_its_interval():
    # faults.png drew mean +- stdev while the fault table gave medians (4KB + THP
    # demand: 6.9 in the figure, 9.0 in the table); both now come from one summary.
    from pagezero.studies.report import faults
    from pagezero.studies.report.cells import Section
    from pagezero.studies.report.words import rate

    rs = result_set(
        [
            point(f, 64 * MB, r, 3, benchmark="mmap", seed=i, page="4KB", thp=thp)
            for i, (f, r, thp) in enumerate(
                [("demand", 6e9, True), ("populate", 9e9, True), ("demand", 1e9, False)]
            )
        ]
    )
    section = Section("faults")
    faults._tabulate(section, rs, {})
    header = next(line for line in section.body if line.startswith("| page"))
    assert header.split("|")[4:6] == [" GB/s ", " interval "]
    table = [line.split("|")[1:-1] for line in section.body if line.startswith("| 4KB")]
    fig = bars_figure(rs, label=faults._fault_label)
    heights = [p.get_height() for p in fig.axes[0].patches]
    summaries = [s for _, s in summarize_points(rs).values()]
    for row, height, s in zip(table, heights, summaries, strict=True):
        assert row[3].strip() == rate(height * GBPS) == rate(s["median"])
        assert row[4].strip() == f"+-{s['spread_pct']:.1f}% (3 runs)"


def test_names_matplotlib_hides_draw_without_a_warning(tmp_path):
    # A kernel named "_x" in a results file: matplotlib leaves it out of the legend,
    # and asking for a legend of nothing warned (an error under the suite's filters).
    rs = result_set([point("_x", 1 * MB, 5e9, 2), point("_x", 4 * MB, 5e9, 2)])
    for fig in (rates_figure(rs), bars_figure(rs), comparison_figure([rs, rs], ["_a", "_b"])):
        assert fig.axes


def test_control_characters_and_missing_glyphs_draw_without_a_warning(tmp_path):
    # A results file's machine and kernel names are drawn as given (the loaders' fuzz
    # test found a \x1f in one): a control character becomes "?", a glyph the font
    # lacks its box, and neither warns.
    from pagezero.figures import plot_bars, plot_rates

    machine = dict(MACHINE, cpu_model="CPU\x1f\u4e2d\U0001f600", hostname="h\x00")
    rs = result_set([point("k\x1f", 1 * MB, 5e9, 2), point("k\x1f", 4 * MB, 6e9, 2)], machine)
    plot_rates(rs, str(tmp_path / "r"))
    plot_bars(rs, str(tmp_path / "b"))
    fig = rates_figure(rs)
    assert "CPU?" in " ".join(t.get_text() for t in fig.texts)
    assert "k?" in lines_by_label(fig)
