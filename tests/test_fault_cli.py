"""`pagezero mem mmap` end to end: stdout, stderr, the exit status and the files it
writes, the command run in this process (tests/helpers/cli.py run_cli), but for a
Ctrl-C during a reserved run, a real process and a real signal. Small sizes, one
or two loops; no assertion on how fast anything is.
"""

import json
import os
import re
import signal
import time

import pytest
from conftest import (
    FUNCTION_RE,
    check_environment_error,
    check_rate_line,
    check_usage_error,
    hugetlb_bytes,
    mem_available,
    never_available,
    ok,
    pagezero_main,
    require_hugepages,
    start_python,
)
from helpers.children import DEADLINE_S, finish, give_up
from helpers.cli import run_cli
from helpers.cpus import CPUS
from helpers.faults import cut_short_memset, loops_run

import pagezero
from pagezero.cli import main
from pagezero.cli import mem as cli_mem
from pagezero.measure import fault
from pagezero.system import hugepages

SMALL = ["-s", "4MB", "-l", "2"]
THREAD_RE = re.compile(r"^# per thread: \d+\.\d\d GB/s \( \+- \d+\.\d\d% between threads \)$")
LATENCY_RE = re.compile(
    r"^# latency per (?P<what>.+): p50 [\d.]+ (ns|us|ms|s), "
    r"p99 [\d.]+ (ns|us|ms|s), max [\d.]+ (ns|us|ms|s) \((?P<n>\d+) samples\)$"
)
HEADROOM_RE = re.compile(
    r"^# headroom '(?P<name>[^']+)': faults \d+\.\d\d GB/s(/thread)?, "
    r"best user-space clear of 4KB extents \d+\.\d\d GB/s \((?P<kernel>[^)]+)\): "
    r"(?P<ratio>[\d.]+)x$"
)


def mmap(*args):
    return run_cli("mem", "mmap", *args)


def blocks(stdout):
    """Split the default output into one list of lines per function."""
    lines = stdout.splitlines()
    assert lines[0] == "# Running 'mem/mmap' benchmark:"
    out = []
    for line in lines[1:]:
        if FUNCTION_RE.match(line):
            out.append([])
        out[-1].append(line)
    return out


def test_default_output_as_perf_prints_it():
    out = ok(mmap(*SMALL))
    found = blocks(out)
    assert [FUNCTION_RE.match(b[0])["name"] for b in found] == list(fault.WORKLOADS)
    for b in found:
        m = FUNCTION_RE.match(b[0])
        assert m["description"] == fault.describe(m["name"])
        assert b[1] == "# Copying 4MB bytes ..."
        assert b[2] == ""
        check_rate_line(b[3])
        assert b[4] == "# pages: asked 4KB (THP refused), got 4KB"
    assert fault.describe("demand") == "Demand loaded mmap()"  # perf's words
    assert fault.describe("populate") == "Eagerly populated mmap()"


def test_threads_print_the_aggregate_and_the_per_thread_rate():
    out = ok(mmap(*SMALL, "-f", "demand", "-t", "2", "-r", "9"))
    [b] = blocks(out)
    assert b[2] == "# 2 threads, each faulting its own 4MB"
    check_rate_line(b[4])
    assert THREAD_RE.match(b[5]), b[5]


def test_latency_lines_and_populate_skipped():
    proc = mmap(*SMALL, "--latency")
    out = ok(proc)
    assert proc.stderr.startswith("# -f all skips populate (MAP_POPULATE faults every page")
    found = blocks(out)
    assert [FUNCTION_RE.match(b[0])["name"] for b in found] == ["demand", "populate-write"]
    for b in found:
        [line] = [line for line in b if line.startswith("# latency")]
        m = LATENCY_RE.match(line)
        assert m, line
        assert m["what"] == "64KB (16 faults of 4KB)" and int(m["n"]) == 2 * 64


def test_headroom_line():
    out = ok(mmap(*SMALL, "-f", "demand", "--headroom"))
    m = HEADROOM_RE.match(out.splitlines()[-1])
    assert m, out
    assert m["name"] == "demand" and float(m["ratio"]) > 0
    assert m["kernel"] in [k.name for k in pagezero.kernels("clear") if k.available]


def test_headroom_stopped_saves_the_faults_and_the_clears(tmp_path, monkeypatch, capsys):
    # The clears are saved beside the faults but not counted among the loops planned.
    cut_short_memset(monkeypatch, at=2)
    out = tmp_path / "run.json"
    status = main(
        ["mem", "mmap", "-s", "4MB", "-l", "2", "-f", "demand", "--headroom", "-o", str(out)]
    )
    err = capsys.readouterr().err
    assert status == 143, err
    assert err.strip() == f"pagezero: interrupted by SIGTERM after 2 of 2 loops; saved to {out}"
    results = pagezero.load_results(str(out))
    assert [(r.benchmark, loops_run(r)) for r in results] == [
        ("mmap", 2),
        ("memset", 2),
        ("memset", 1),
    ]
    assert results[-1].interrupted == "SIGTERM"


def test_simple_format_prints_one_number_per_function():
    lines = ok(mmap(*SMALL, "--format", "simple")).splitlines()
    assert len(lines) == len(fault.WORKLOADS)
    assert all(float(x) > 0 for x in lines)


def test_help_lists_the_workloads():
    out = ok(mmap("-f", "help"))
    for name in fault.WORKLOADS:
        assert f"\t{name} ... {fault.describe(name)}" in out


def test_output_file_keeps_samples_pages_and_threads(tmp_path):
    path = tmp_path / "mmap.json"
    ok(mmap(*SMALL, "-f", "populate", "-t", "2", "-o", str(path)))
    doc = json.loads(path.read_text())
    [r] = doc["results"]
    assert r["benchmark"] == "mmap" and r["function"] == "populate"
    assert len(r["samples"]) + r["details"].get("warmup", {}).get("loops", 0) == 2
    assert len(r["details"]["thread_samples"]) == 2
    assert r["details"]["pages"][0]["rss"] == 2 * 4 << 20
    [back] = pagezero.load_results(path)
    assert back.params["threads"] == 2


def test_mmap_touches_as_perf_unless_told_to_write(tmp_path):
    for args, touch in (((), "perf"), (("--touch", "write"), "write")):
        path = tmp_path / f"{touch}.json"
        out = ok(mmap(*SMALL, "-f", "demand", "-o", str(path), *args))
        [b] = blocks(out)
        assert f"# touch: {cli_mem.TOUCH_LINES[touch]}" in b
        [back] = pagezero.load_results(path)
        assert back.details["touch"] == touch


def test_2mb_pages_when_reserved():
    require_hugepages("2MB", 2)
    out = ok(mmap("-s", "4MB", "-p", "2MB", "-l", "1", "-f", "demand", "--latency"))
    [b] = blocks(out)
    assert b[4] == "# pages: asked 2MB hugetlb, got 2MB hugetlb"
    assert LATENCY_RE.match(b[5])["what"] == "2MB fault"


BAD_INPUTS = {
    "unknown workload": (["-f", "fault"], "unknown workload 'fault'"),
    "unknown page size": (["-p", "3MB"], "invalid page size '3MB'"),
    "seed not a number": (["-r", "abc"], "argument -r/--randomize: invalid integer 'abc'"),
    "negative seed": (["-r", "-1"], "seed must be .*not -1"),
    "seed too large": (["-r", str(2**32)], "seed must be .*not 4294967296"),
    "threads zero": (["-t", "0"], "threads must be .*not 0"),
    "unknown touch": (["--touch", "read"], "argument --touch: invalid choice: 'read'"),
    "threads negative": (["-t", "-3"], "threads must be .*not -3"),
    "threads not a number": (["-t", "many"], "argument -t/--threads: invalid integer 'many'"),
    "size not whole pages": (
        ["-s", "3MB", "-p", "2MB"],
        "invalid size '3MB': not a whole number of 2MB pages",
    ),
    "populate latency": (["-f", "populate", "--latency"], "populate .*no fault to time"),
    "loops zero": (["-l", "0"], "loops must be .*not 0"),
    "thp on hugetlb": (["-p", "2MB", "-s", "2MB", "--thp"], "thp=True applies to 4KB pages only"),
    "cycles with threads": (["-c", "-t", "2"], "cycles clock .*more than one thread"),
    "-c against --clock tsc": (["--clock", "tsc", "-c"], "-c/--cycles and --clock tsc contradict"),
    "unknown option": (["--bogus"], "unrecognized arguments: --bogus"),
}


@pytest.mark.parametrize("args, words", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_one_line_and_exit_2(args, words, capsys):
    proc = pagezero_main(capsys, "mem", "mmap", "-s", "1MB", "-l", "1", *args)
    assert re.search(words, check_usage_error(proc))


def test_more_threads_than_memory_allows_is_exit_1():
    size = 2 * mem_available() // CPUS // 4096 * 4096
    check_environment_error(
        mmap("-s", f"{size}B", "-t", str(CPUS), "-l", "1"), "too large", "MemAvailable"
    )


def test_more_threads_than_cpus_is_refused_as_memset_refuses_it(capsys):
    # One check for both (measure.conditions.check_threads): a thread waiting for a CPU
    # would time the scheduler.
    lines = []
    for bench in ("mmap", "memset"):
        proc = pagezero_main(capsys, "mem", bench, "-s", "1MB", "-l", "1", "-t", str(CPUS + 1))
        lines.append(check_usage_error(proc))
    assert lines[0] == lines[1]
    assert f"more than the {CPUS} CPUs this process may run on" in lines[0]


@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("page", ["2MB", "1GB"])
def test_hugepage_shortage_names_the_file(page):
    before = pagezero.hugepage_pools()[page].total
    proc = mmap("-s", f"{never_available(page)}B", "-p", page, "-l", "1")
    check_environment_error(proc, f"not enough {page} hugepages", "nr_hugepages", "--reserve")
    assert pagezero.hugepage_pools()[page].total == before


def test_no_cycle_counter_is_exit_1(without_pmu):
    check_environment_error(mmap("-s", "1MB", "-l", "1", "-c", "-f", "demand"), "tsc")


def test_a_thp_fallback_is_never_silent():
    mode = pagezero.machine()["thp"]["enabled"]
    if mode != "madvise":
        pytest.skip(f"THP mode is {mode!r}, not madvise: MAP_POPULATE may get THP here")
    # In madvise mode MAP_POPULATE faults the pages before MADV_HUGEPAGE applies.
    proc = mmap("-s", "4MB", "-l", "1", "-f", "populate", "--thp")
    out = ok(proc)
    assert "# pages: asked 4KB with THP, got 4KB" in out
    assert "pagezero: warning: 'populate'" in proc.stderr and "populate-write" in proc.stderr


@pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(hugepages.SYSFS + "/hugepages-2048kB"),
    reason="resizing a hugepage pool needs root and a 2MB pool",
)
@pytest.mark.owns_hugepage_pools
def test_ctrl_c_during_a_reserved_run_restores_the_pool():
    before = hugepages.pool("2MB").total
    pages = hugepages.pool("2MB").available + 1  # one more than is free: --reserve acts
    # Far more loops than can finish (hours): only the interrupt ends the run, however
    # fast this machine faults; the C loops stop within one loop (csrc/stop.h), then the
    # CLI unwinds.
    loops = 10_000_000
    with start_python(
        "-m",
        "pagezero",
        "mem",
        "mmap",
        "-s",
        f"{2 * pages}MB",
        "-p",
        "2MB",
        "-f",
        "demand",
        "-l",
        str(loops),
        "--reserve",
    ) as proc:
        # Signalled once the run maps its own hugepages (its HugetlbPages), which
        # follows its reservation: the pool's size alone can move with any other
        # user of the shared pool, and a signal during the imports is a traceback.
        deadline = time.monotonic() + DEADLINE_S
        while hugetlb_bytes(proc.pid) == 0 and proc.poll() is None:
            if time.monotonic() > deadline:
                give_up(proc, "the run never mapped its hugepages")
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        _, err = finish(proc)
    assert proc.returncode == 130, err
    assert re.fullmatch(
        rf"pagezero: interrupted by SIGINT after \d+ of {loops} loops; "
        r"(nothing measured|not saved \(no -o\))",
        err.strip(),
    ), err
    assert hugepages.pool("2MB").total == before
