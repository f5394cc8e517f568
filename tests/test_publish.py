"""`pagezero store publish -o SITE`: a static site of the store (index, each
point's history, comparisons of two result sets), written whole or not at all.
The browser's view of it is tests/test_browser.py's."""

import os
import re

import pytest
from figure_data import make_store
from html_pages import Page, external

import pagezero.store as publish_module
from pagezero.analysis.compare import compare, format_table
from pagezero.cli import main
from pagezero.store import MARKER, Store, publish


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("publish")
    store_path = make_store(folder)
    assert main(["store", "publish", "--store", store_path, "-o", str(folder / "site")]) == 0
    return folder / "site", store_path


def read(path):
    return path.read_text()


def test_the_site_has_its_pages(site):
    d, _ = site
    pages = sorted(p.name for p in d.iterdir())
    assert "index.html" in pages and MARKER in pages
    assert len([p for p in pages if re.fullmatch(r"point-\d+\.html", p)]) == 4  # 2 kernels x 2
    # Four sets sharing every point: every pair is compared.
    assert len([p for p in pages if p.startswith("compare-")]) == 6


def test_every_link_is_relative_and_there(site):
    d, _ = site
    for path in d.glob("*.html"):
        page = Page(read(path))
        for _tag, _name, address in page.addresses():
            if address.startswith("file://"):  # a result set's report, outside the site
                assert address.endswith("report.html") and os.path.isfile(address[7:])
            elif external(address):
                assert "://" not in address and (d / address).is_file(), (path.name, address)


def test_the_index_lists_machines_sets_and_points(site):
    d, _ = site
    page = Page(read(d / "index.html"))
    assert page.headings[:2] == ["pagezero results", "Machines"]
    assert [t[0] for t in page.tables] == ["machine", "set", "point"]
    text = read(d / "index.html")
    assert "alpha" in text and "beta" in text
    reports = [a for _, n, a in page.addresses() if a.startswith("file://")]
    assert len(reports) == 1  # only r0 has a report beside it


def test_a_points_history_has_one_line_per_machine(site):
    d, store_path = site
    text = read(d / "point-1.html")
    page = Page(text)
    assert len(page.svg_parents) == 1 and page.tables[0][0] == "measured (UTC)"
    assert text.count("<tr>") == 1 + 4  # header and the four sets
    for host in ("alpha", "beta"):
        assert f"{host}: " in text  # its line's legend entry
    assert (d / "point-1.png").is_file()  # the figure for mail too


def test_a_comparison_is_pagezero_compares(site):
    d, store_path = site
    with Store(store_path) as store:
        docs = dict(store.documents())
        ids = [s["id"] for s in store.list()]
    from pagezero.store import stored_result_set

    a, b = ids[0], ids[2]
    rows = compare(stored_result_set(docs[a]), stored_result_set(docs[b]))
    expected = format_table(rows, [f"#{a}", f"#{b}"])
    import html

    assert html.escape(expected) in read(d / f"compare-{a}-{b}.html")


def test_publishing_again_replaces_the_site_and_leaves_no_temporary(site, tmp_path):
    d, store_path = site
    (d / "stale.html").write_text("old")
    assert main(["store", "publish", "--store", store_path, "-o", str(d)]) == 0
    assert not (d / "stale.html").exists() and (d / "index.html").is_file()
    assert not [p for p in d.parent.iterdir() if p.name.startswith((".publish-", ".unpublished"))]


# Bad input: exit 2, one line, nothing written ---------------------------------------


@pytest.mark.parametrize("case", ["missing-parent", "a-file", "other-files", "empty-store"])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, case):
    store_path = str(tmp_path / "store.sqlite")
    if case == "empty-store":
        Store(store_path, create=True).close()
    else:
        store_path = make_store(tmp_path)
    target = {
        "missing-parent": tmp_path / "no" / "site",
        "a-file": tmp_path / "file",
        "other-files": tmp_path / "r0",
        "empty-store": tmp_path / "site",
    }[case]
    if case == "a-file":
        target.write_text("x")
    before = sorted(p.name for p in tmp_path.iterdir())
    r0 = sorted(p.name for p in (tmp_path / "r0").iterdir()) if case != "empty-store" else None
    assert main(["store", "publish", "--store", store_path, "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pagezero: error: ") and err.count("\n") == 1
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    if r0 is not None:
        assert sorted(p.name for p in (tmp_path / "r0").iterdir()) == r0


def test_a_failure_half_way_leaves_the_old_site(tmp_path, monkeypatch):
    store_path = make_store(tmp_path)
    site_dir = tmp_path / "site"
    with Store(store_path) as store:
        publish(store, str(site_dir))
    index = read(site_dir / "index.html")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish_module, "_compare_page", broken)
    with Store(store_path) as store, pytest.raises(OSError):
        publish(store, str(site_dir))
    assert read(site_dir / "index.html") == index
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".publish-")]
