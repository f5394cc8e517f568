"""The pages batch(), folio() and mem --thp clear on: the backing asked and
used, recorded in results and printed in headings; THP checked in smaps."""

import json

import pytest
from conftest import check_usage_error, ok, pagezero_cli

import pagezero
from pagezero.cli import main
from pagezero.cli.mem import _print_conditions
from pagezero.cli.render import backing_heading, backing_lines
from pagezero.measure import policy
from pagezero.measure.policy import BatchResult
from pagezero.results.resultset import Result
from pagezero.system import backing as mappings

MB = 1 << 20
THP_ON = mappings.thp_mode() in ("always", "madvise")
needs_thp = pytest.mark.skipif(
    not THP_ON,
    reason="transparent huge pages are "
    f"{mappings.thp_mode() or 'not available'} on this kernel "
    f"({mappings.THP_SYSFS})",
)


def no_hugetlb(monkeypatch, thp="madvise"):
    """No 2MB hugepage available, and THP as `thp` says."""
    monkeypatch.setattr(mappings.hugepages, "available_pages", lambda page, node=None: 0)
    monkeypatch.setattr(mappings, "thp_mode", lambda *paths: thp)


# batch ---------------------------------------------------------------------------


def test_batch_on_4kb_pages_says_so():
    r = pagezero.batch("4MB", "1MB", loops=1, backing="4KB")[0]
    assert r.params["backing"] == "4KB"
    assert "huge_share" not in r.details and "backing_note" not in r.details


@needs_thp
def test_batch_on_thp_measures_the_share():
    r = pagezero.batch("8MB", "1MB", loops=1, threads=1, backing="thp")[0]
    assert r.params["backing"] == "thp"
    d = r.details
    assert d["buffer_bytes"] == 8 * MB and 0 <= d["huge_bytes"] <= 8 * MB
    assert d["huge_share"] == d["huge_bytes"] / d["buffer_bytes"]


@needs_thp
def test_batch_auto_without_hugetlb_asks_thp(monkeypatch):
    no_hugetlb(monkeypatch)
    r = pagezero.batch("4MB", "1MB", loops=1)[0]
    assert r.params["backing"] == "thp" and "huge_share" in r.details
    assert r.details["backing_note"].startswith("2 2MB hugepages needed, 0 available")


def test_batch_auto_without_hugetlb_or_thp_takes_4kb_with_a_line(monkeypatch):
    no_hugetlb(monkeypatch, thp="never")
    r = pagezero.batch("4MB", "1MB", loops=1)[0]
    assert r.params["backing"] == "4KB" and "huge_share" not in r.details
    assert "transparent huge pages are never" in r.details["backing_note"]


def test_batch_auto_falls_back_when_the_hugetlb_mapping_fails(monkeypatch):
    # The pool looked big enough, then someone else took the pages.
    monkeypatch.setattr(mappings.hugepages, "available_pages", lambda page, node=None: 1 << 20)
    monkeypatch.setattr(mappings, "thp_mode", lambda *paths: "never")
    real = policy.orders.region  # backed_region() maps through it

    def region(size, page="4KB", **kw):
        if page != "4KB":
            raise pagezero.MappingError(12, "memory allocation failed")
        return real(size, page=page, **kw)

    monkeypatch.setattr(policy.orders, "region", region)
    r = pagezero.batch("4MB", "1MB", loops=1)[0]
    assert r.params["backing"] == "4KB"
    assert r.details["backing_note"].startswith("the hugetlb mapping failed")


def test_batch_hugetlb_without_pages_fails_clearly(monkeypatch):
    monkeypatch.setattr(
        mappings.hugepages,
        "pool",
        lambda page: mappings.hugepages.Pool("2MB", 2 * MB, 0, 0, 0, 0, "/fixture/nr_hugepages"),
    )
    with pytest.raises(pagezero.MappingError, match="not enough 2MB hugepages"):
        pagezero.batch("4MB", "1MB", loops=1, backing="hugetlb")


def test_batch_thp_where_thp_is_off_fails_clearly(monkeypatch):
    monkeypatch.setattr(mappings, "thp_mode", lambda *paths: "never")
    with pytest.raises(pagezero.UnavailableError, match="transparent huge pages are never"):
        pagezero.batch("4MB", "1MB", loops=1, backing="thp")


def test_batch_unknown_backing():
    with pytest.raises(ValueError, match="unknown backing 'huge'"):
        policy.plan_batch("4MB", "1MB", backing="huge")


def test_batch_on_a_given_buffer_records_what_smaps_shows():
    p = policy.plan_batch("4MB", "1MB", loops=1)
    with pagezero.region(4 * MB, thp=False) as reg:
        r = policy.run_batch(p, reg)
    assert r.params["backing"] == "4KB"
    # Named: taken as said.
    with pagezero.region(4 * MB, thp=False) as reg:
        r = policy.run_batch(policy.plan_batch("4MB", "1MB", loops=1, backing="4KB"), reg)
    assert r.params["backing"] == "4KB"


def test_old_batch_results_load_as_4kb_pages(tmp_path):
    r = pagezero.batch("4MB", "1MB", loops=1, backing="4KB")[0]
    d = r.to_dict()
    del d["params"]["backing"]
    old = Result.from_dict(d)
    assert isinstance(old, BatchResult) and old.params["backing"] == "4KB"
    path = tmp_path / "old.json"
    pagezero.save_results(str(path), [old])
    text = json.loads(path.read_text())
    del text["results"][0]["params"]["backing"]
    path.write_text(json.dumps(text))
    [loaded] = pagezero.load_results(str(path))
    assert loaded.params["backing"] == "4KB"


# folio ---------------------------------------------------------------------------


@needs_thp
@pytest.mark.parametrize("size", ["64KB", "2MB", "4MB"])
def test_folio_on_thp(size):
    r = pagezero.folio(size, strategy="sequential", loops=1, backing="thp")[0]
    assert r.backing == "thp" and r.params["backing"] == "thp"
    assert r.details["buffer_bytes"] == r.bytes_per_loop
    assert 0 <= r.details["huge_share"] <= 1


@needs_thp
def test_folio_auto_without_a_free_page_asks_thp(monkeypatch):
    no_hugetlb(monkeypatch)
    r = pagezero.folio("2MB", strategy="sequential", loops=1)[0]
    assert r.backing == "thp" and "huge_share" in r.details
    assert r.details["backing_note"] == (
        "no free 2MB hugetlb page: transparent huge pages asked with MADV_HUGEPAGE"
    )


def test_folio_memory_says_its_pages(monkeypatch):
    no_hugetlb(monkeypatch, thp="never")
    mem = policy.FolioMemory(64 << 10, "auto")
    try:
        assert mem.backing == "4KB" and mem.page_label == "4KB pages, THP refused"
        assert "transparent huge pages are never" in mem.note
    finally:
        mem.close()


# mem memset / memcpy --thp ------------------------------------------------------


@needs_thp
@pytest.mark.parametrize(
    "run, kw", [(pagezero.memset, {}), (pagezero.memcpy, {"threads": 2, "threads_mode": "private"})]
)
def test_mem_thp_reports_the_share(run, kw):
    r = run("4MB", thp=True, loops=1, **kw)[0]
    d = r.details
    copies = 2 if run is pagezero.memcpy else 1
    assert d["buffer_bytes"] == 4 * MB * copies * kw.get("threads", 1)
    assert 0 <= d["huge_bytes"] <= d["buffer_bytes"]
    assert d["huge_share"] == d["huge_bytes"] / d["buffer_bytes"]


def test_mem_without_thp_reports_no_share():
    assert "huge_share" not in pagezero.memset("4MB", loops=1)[0].details
    assert "huge_share" not in pagezero.memset("4MB", loops=1, thp=None)[0].details


# What the command line prints ------------------------------------------------------


def synthetic(share, nbytes=64 * MB, backing="thp", note=None):
    details = {"huge_share": share, "huge_bytes": int(share * nbytes), "buffer_bytes": nbytes}
    if note:
        details["backing_note"] = note
    return BatchResult(
        benchmark="batch",
        function="generic",
        bytes_per_loop=nbytes,
        params={"size": nbytes, "batch": "8MB", "backing": backing},
        clock="ns",
        samples=(1000,),
        details=details,
        batch_bytes=8 * MB,
        batches_per_loop=8,
        pass_worst_ns=(100,),
        batch_ns={"max": 100},
    )


def test_heading_and_lines_for_a_thp_run_short_of_huge_pages():
    results = [
        synthetic(0.5, note="16 2MB hugepages needed, 0 available"),
        synthetic(0.999, note="16 2MB hugepages needed, 0 available"),
    ]
    assert backing_heading(results) == (
        "2MB THP pages, 50% on huge pages per smaps; 2MB THP pages, 99% on huge pages per smaps"
    )
    lines = backing_lines(results, lambda r: "batch '8MB'")
    assert lines == [
        "# pages: 16 2MB hugepages needed, 0 available",
        "pagezero: warning: batch '8MB': only 50% of the 64MB buffer is on "
        "huge pages (THP asked; smaps): its figures are partly those of 4KB pages",
    ]
    assert backing_heading([synthetic(0, backing="4KB")]).startswith("4KB pages")


def test_mem_conditions_print_the_share_and_warn(capsys):
    r = pagezero.memset("4MB", loops=1)[0]
    r = Result(
        benchmark="memset",
        function="generic",
        params=r.params,
        bytes_per_loop=64 * MB,
        clock="ns",
        samples=(1000,),
        details={"huge_share": 0.9, "huge_bytes": 0, "buffer_bytes": 64 * MB},
    )
    _print_conditions(r)
    out, err = capsys.readouterr()
    assert out == "# THP: 90% of the buffer on huge pages (smaps)\n"
    assert err.startswith("pagezero: warning: 'generic': only 90% of the 64MB buffer")


@needs_thp
def test_cli_mem_memset_thp_prints_the_share():
    out = ok(pagezero_cli("mem", "memset", "-s", "4MB", "-l", "1", "-f", "generic", "--thp"))
    assert any(
        line.startswith("# THP: ") and line.endswith("% of the buffer on huge pages (smaps)")
        for line in out.splitlines()
    )
    out = ok(pagezero_cli("mem", "memset", "-s", "4MB", "-l", "1", "-f", "generic"))
    assert "# THP:" not in out


def test_cli_batch_and_folio_headings_name_the_pages(capsys, monkeypatch):
    no_hugetlb(monkeypatch, thp="never")
    assert main(["batch", "-s", "4MB", "-b", "1MB", "-l", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# Running 'policy/batch': clearing 4MB of 4KB pages in batches")
    assert (
        "# pages: 2 2MB hugepages needed, 0 available, and transparent huge pages are never" in err
    )
    assert (
        main(["folio", "-p", "64KB", "-l", "1", "--strategy", "sequential", "--format", "json"])
        == 0
    )
    [row] = json.loads(capsys.readouterr().out)
    assert row["backing"] == "4KB" and "huge_share" not in row


@needs_thp
def test_cli_batch_and_folio_on_thp():
    out = ok(pagezero_cli("batch", "-s", "4MB", "-b", "1MB", "-l", "1", "--backing", "thp"))
    assert out.startswith("# Running 'policy/batch': clearing 4MB of 2MB THP pages, ")
    assert "% on huge pages per smaps in batches" in out.splitlines()[0]
    out = ok(pagezero_cli("folio", "-l", "1", "--strategy", "sequential", "--backing", "thp"))
    assert out.startswith("# Running 'policy/folio': 2MB folio (2MB THP pages, ")
    rows = json.loads(
        ok(
            pagezero_cli(
                "batch", "-s", "4MB", "-b", "1MB", "-l", "1", "--backing", "thp", "--format", "json"
            )
        )
    )
    assert rows[0]["backing"] == "thp" and 0 <= rows[0]["huge_share"] <= 1


@pytest.mark.parametrize("command", [["batch", "-s", "4MB"], ["folio", "-p", "64KB"]])
def test_cli_unknown_backing(command):
    line = check_usage_error(pagezero_cli(*command, "--backing", "huge"))
    assert "argument --backing: invalid choice: 'huge'" in line
