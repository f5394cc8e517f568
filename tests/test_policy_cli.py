"""`pagezero folio`, `pagezero batch` and `pagezero advise` as a user runs them, in
this process (tests/helpers/cli.py run_cli), but for a CPU feature hidden, which
takes a fresh process (the extension reads $PAGEZERO_HIDE_FEATURES once).

Folios here are 4KB-page mappings (--backing 4KB), so the tests never take
a hugepage from a pool someone else reserved; small sizes, two loops.
"""

import json
import os
import re

import pytest
from conftest import (
    check_environment_error,
    check_usage_error,
    ok,
    pagezero_main,
    run_python,
)
from helpers.cli import run_cli

import pagezero
from pagezero.measure.policy import PRESETS, STRATEGIES

FOLIO = ["folio", "-p", "64KB", "-l", "2", "--backing", "4KB"]
BATCH = ["batch", "-s", "1MB", "-l", "2"]


# folio -----------------------------------------------------------------------


def test_folio_default_prints_every_strategy():
    out = ok(run_cli("folio", "-l", "2", "--backing", "4KB")).splitlines()
    assert out[0].startswith(
        "# Running 'policy/folio': 2MB folio (4KB pages, THP refused), fault at page 0"
    )
    assert "pages 0..2 (192 lines)" in out[1]
    assert out[2].split() == [
        "strategy",
        "GB/s",
        "touch",
        "ns/line",
        "cold",
        "ns/line",
        "touch/cold",
    ]
    rows = [line.split() for line in out[3:]]
    assert [r[0] for r in rows] == list(STRATEGIES)
    for r in rows:
        assert all(float(x) > 0 for x in r[1:])


def test_folio_json():
    out = ok(
        run_cli(
            *FOLIO, "--strategy", "neighbourhood-last", "--fault-index", "9", "--format", "json"
        )
    )
    [row] = json.loads(out)
    assert row["strategy"] == "neighbourhood-last" and row["fault_index"] == 9
    assert row["folio_bytes"] == 64 << 10 and row["backing"] == "4KB"
    assert row["touch_lines"] == 5 * 64
    assert row["touch_ns_per_line"] > 0 and row["cold_ns_per_line"] > 0
    assert row["bytes_per_sec"] > 0


def test_folio_simple_prints_three_numbers_per_strategy():
    out = ok(run_cli(*FOLIO, "--format", "simple")).splitlines()
    assert len(out) == len(STRATEGIES)
    for line in out:
        assert len(line.split()) == 3 and all(float(x) > 0 for x in line.split())


def test_folio_output_file(tmp_path):
    path = tmp_path / "folio.json"
    ok(run_cli(*FOLIO, "--strategy", "sequential", "--cold", "evict", "-o", str(path)))
    [r] = pagezero.load_results(str(path))
    assert r.benchmark == "folio" and r.params["strategy"] == "sequential"
    with open(path) as f:
        d = json.load(f)["results"][0]
    assert d["folio"]["cold_method"] == "evict" and d["folio"]["backing"] == "4KB"


# batch -----------------------------------------------------------------------


def test_batch_default_runs_every_preset():
    out = ok(run_cli("batch", "-s", "32MB", "-l", "2")).splitlines()
    # The pages used, by default the kernel's own choice (pagezero.system.backing).
    assert re.match(
        r"# Running 'policy/batch': clearing 32MB of (2MB hugetlb|2MB THP|4KB) "
        r"pages",
        out[0],
    )
    rows = [line.split() for line in out[3:]]
    assert [r[0] for r in rows] == list(PRESETS)
    assert [(r[1], r[2]) for r in rows] == [
        ("4KB", "8192"),
        ("8MB", "4"),
        ("32MB", "1"),
        ("32MB", "1"),
    ]
    for r in rows:
        assert all(float(x) > 0 for x in r[2:])


def test_batch_default_skips_presets_larger_than_the_region():
    proc = run_cli(*BATCH)
    rows = [line.split()[0] for line in ok(proc).splitlines()[3:]]
    assert rows == ["page", "extent"]
    assert "batch '8MB' skipped" in proc.stderr and "batch '32MB' skipped" in proc.stderr


def test_batch_json_and_presets_as_sizes():
    out = ok(
        run_cli("batch", "-s", "16MB", "-l", "2", "-b", "8MB", "-b", "64KB", "--format", "json")
    )
    rows = json.loads(out)
    assert [(r["batch"], r["batch_bytes"], r["batches_per_loop"]) for r in rows] == [
        ("8MB", 8 << 20, 2),
        ("64KB", 64 << 10, 256),
    ]
    for r in rows:
        assert set(r) - {"huge_share"} == {
            "batch",
            "batch_bytes",
            "kernel",
            "batches_per_loop",
            "loops",
            "bytes_per_sec",
            "worst_ms",
            "p99_ms",
            "typical_worst_ms",
            "median_ms",
            "backing",
        }
        assert ("huge_share" in r) == (r["backing"] == "thp")
        assert r["worst_ms"] >= r["p99_ms"] >= r["median_ms"] > 0


def test_batch_simple_with_yield():
    out = ok(run_cli(*BATCH, "-b", "page", "--yield", "--format", "simple"))
    assert len(out.split()) == 3


def test_batch_output_file(tmp_path):
    path = tmp_path / "batch.json"
    ok(run_cli(*BATCH, "-b", "extent", "--kernel", "generic", "-o", str(path)))
    [r] = pagezero.load_results(str(path))
    assert (r.benchmark, r.function, r.params["batch"]) == ("batch", "generic", "extent")


# advise ----------------------------------------------------------------------


def test_advise_quick_json_shape():
    doc = json.loads(ok(run_cli("advise", "--quick", "--format", "json")))
    assert set(doc) >= {"knee_bytes", "llc_bytes", "best_kernel", "batch"}
    assert [b["budget_ms"] for b in doc["batch"]] == [1.0, 3.0]


def test_advise_quick_words_and_output(tmp_path):
    path = tmp_path / "advice.json"
    proc = run_cli("advise", "--quick", "--budget", "2", "-o", str(path))
    out = ok(proc)
    assert "Kernel by extent (" in out and "Knee" in out and "\n  2 ms -> " in out
    with open(path) as f:
        assert [b["budget_ms"] for b in json.load(f)["batch"]] == [2.0]


# Bad input: one line, exit 2, nothing run -----------------------------------------

BAD_INPUTS = {
    "folio fault outside": ([*FOLIO, "--fault-index", "16"], "fault index 16 is outside the folio"),
    "folio fault negative": (
        [*FOLIO, "--fault-index", "-1"],
        "fault index -1 is outside the folio",
    ),
    "folio fault not a number": (
        [*FOLIO, "--fault-index", "first"],
        "argument --fault-index: invalid integer 'first'",
    ),
    "folio unknown strategy": (
        [*FOLIO, "--strategy", "random"],
        "argument --strategy: invalid choice: 'random'",
    ),
    "folio unknown kernel": ([*FOLIO, "--kernel", "nope"], "unknown clear kernel 'nope'"),
    "folio temporal nt kernel": (
        [*FOLIO, "--strategy", "nocache-except-target", "--nt-kernel", "generic"],
        "nt_kernel 'generic' uses temporal stores",
    ),
    "folio size not a power of two": (["folio", "-p", "48KB"], "invalid folio size '48KB'"),
    "folio bad size": (["folio", "-p", "2XB"], "invalid folio size '2XB'"),
    "folio hugetlb 64KB": (
        [*FOLIO, "--backing", "hugetlb"],
        "hugetlb backing needs a 2MB or 1GB folio, not 64KB",
    ),
    "folio zero loops": (["folio", "-l", "0"], "loops must be .*not 0"),
    "batch zero": ([*BATCH, "-b", "0"], "invalid batch '0'"),
    "batch larger than region": (
        [*BATCH, "-b", "2MB"],
        "invalid batch '2MB': larger than the region",
    ),
    "batch not whole pages": ([*BATCH, "-b", "6KB"], "invalid batch 6KB"),
    "batch unknown preset": ([*BATCH, "-b", "huge"], "invalid batch 'huge'"),
    "batch unknown kernel": ([*BATCH, "--kernel", "nope"], "unknown clear kernel 'nope'"),
    "batch size not whole pages": (
        ["batch", "-s", "5000"],
        "invalid size 5000B: not a whole number of 4KB pages",
    ),
    "batch loops not a number": (
        ["batch", "-s", "1MB", "-l", "x"],
        "argument -l/--nr_loops: invalid integer 'x'",
    ),
    "advise zero budget": (
        ["advise", "--quick", "--budget", "0"],
        "latency budget must be .*not 0",
    ),
    "advise bad budget": (
        ["advise", "--quick", "--budget", "soon"],
        "argument --budget: invalid number 'soon'",
    ),
    "advise bad format": (
        ["advise", "--quick", "--format", "simple"],
        "argument --format: invalid choice: 'simple'",
    ),
}


@pytest.mark.parametrize("args, words", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_one_line_and_exit_2(args, words, tmp_path, capsys):
    out = tmp_path / "out.json"
    # The line names the option or value at fault (a regular expression).
    assert re.search(words, check_usage_error(pagezero_main(capsys, *args, "-o", str(out))))
    assert list(tmp_path.iterdir()) == []


def test_unavailable_kernel_exits_1():
    if "x86-64-stosb" not in [k.name for k in pagezero.kernels()]:
        pytest.skip("no x86-64-stosb kernel on this architecture")
    env = dict(os.environ, PAGEZERO_HIDE_FEATURES="erms")
    for args in (BATCH + ["--kernel", "x86-64-stosb"], FOLIO + ["--kernel", "x86-64-stosb"]):
        proc = run_python("-m", "pagezero", *args, env=env)
        check_environment_error(proc, "erms")
