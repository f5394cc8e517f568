"""runs=N / --runs N: the same measurement in N fresh processes, one after the
other, each Result recording its run (process) and the pid that measured it."""

import inspect
import json
import os
import re

import pytest
from conftest import check_rate_line, check_usage_error, ok, pagezero_cli, pagezero_main

import pagezero
from pagezero.cli.render import pooled
from pagezero.measure import fault, mem, policy

BETWEEN_RUNS = re.compile(r"^# (\d+) runs: between runs \+- \d+\.\d%$")


def test_runs_3_gives_3_results_from_3_fresh_processes():
    rs = pagezero.memset(size="64KB", loops=2, runs=3)
    assert isinstance(rs, pagezero.ResultSet) and len(rs) == 3
    assert [r["process"] for r in rs.runs] == [0, 1, 2]
    pids = {r["pid"] for r in rs.runs}
    assert len(pids) == 3 and os.getpid() not in pids
    assert all(r.loops == 2 and r.benchmark == "memset" for r in rs)


@pytest.mark.parametrize(
    "call",
    [
        lambda runs: pagezero.memcpy(size="64KB", loops=1, runs=runs),
        lambda runs: pagezero.faults(size="64KB", loops=1, runs=runs),
        lambda runs: pagezero.batch(size="1MB", batch="256KB", loops=1, runs=runs),
        lambda runs: pagezero.folio(size="64KB", loops=1, runs=runs),
    ],
    ids=["memcpy", "faults", "batch", "folio"],
)
def test_every_measuring_function_takes_runs(call):
    one = call(1)
    # runs=1: a ResultSet too, of the one Result measured in this process.
    assert isinstance(one, pagezero.ResultSet) and len(one) == 1
    assert one.runs[0]["pid"] == os.getpid()
    rs = call(2)
    assert [type(r) for r in rs] == [type(one[0])] * 2
    assert [r["process"] for r in rs.runs] == [0, 1]


@pytest.mark.parametrize("runs", [0, -1, True, 1.5, "2", None])
@pytest.mark.parametrize("function", ["memset", "memcpy", "faults", "batch", "folio"])
def test_a_bad_runs_is_a_value_error(function, runs):
    with pytest.raises(ValueError, match=r"^runs must be a positive int, not "):
        getattr(pagezero, function)(runs=runs)


@pytest.mark.parametrize(
    "measure", [mem.memset, mem.memcpy, fault.faults, policy.batch, policy.folio]
)
def test_the_measure_layer_has_runs_for_the_types_but_measures_one(measure):
    # pagezero.measure's functions carry runs (the public calls' signatures are theirs:
    # runs.processes.with_runs) and refuse N > 1, which only the runs layer carries out.
    function = measure.__name__
    assert list(inspect.signature(measure).parameters)[-1] == "runs"
    with pytest.raises(
        ValueError, match=rf"^runs=2 here: .*pagezero\.{function}\(\.\.\., runs=N\)"
    ):
        measure(runs=2)


def test_a_bad_argument_is_refused_before_any_process_starts():
    with pytest.raises(ValueError, match="invalid size 'x'"):
        pagezero.memset(size="x", runs=2)


def test_pooled_runs_rate_is_total_bytes_over_total_time():
    a = pagezero.memset(size="64KB", loops=2)[0]
    b = pagezero.memset(size="64KB", loops=3)[0]
    both = pooled([a, b])
    assert both.samples == a.samples + b.samples
    assert both.bytes_per_sec == pytest.approx(
        (a.total_bytes + b.total_bytes) / (sum(a.seconds) + sum(b.seconds))
    )


def test_pooled_batch_worst_is_the_worst_of_the_runs():
    a = pagezero.batch(size="1MB", batch="256KB", loops=2)[0]
    b = pagezero.batch(size="1MB", batch="256KB", loops=2)[0]
    assert pooled([a, b]).worst_ms == max(a.worst_ms, b.worst_ms)


def test_cli_runs_prints_the_spread_between_runs_and_saves_every_run(tmp_path):
    out = tmp_path / "r.json"
    stdout = ok(
        pagezero_cli(
            "mem", "memset", "-s", "64KB", "-l", "2", "-f", "default", "--runs", "3", "-o", out
        )
    )
    lines = stdout.splitlines()
    check_rate_line(lines[4])
    m = BETWEEN_RUNS.match(lines[5])
    assert m and m.group(1) == "3", stdout
    rs = pagezero.ResultSet.load(out)
    assert [r["process"] for r in rs.runs] == [0, 1, 2]
    assert len({r["pid"] for r in rs.runs}) == 3


def test_cli_runs_with_every_kernel_runs_each_in_every_process(tmp_path):
    out = tmp_path / "r.json"
    stdout = ok(pagezero_cli("mem", "memcpy", "-s", "64KB", "-l", "1", "--runs", "2", "-o", out))
    kernels = re.findall(r"^# function '([^']+)'", stdout, re.M)
    assert len(kernels) == len([line for line in stdout.splitlines() if BETWEEN_RUNS.match(line)])
    rs = pagezero.ResultSet.load(out)
    for process in (0, 1):
        assert sorted(
            r.function for r, run in zip(rs, rs.runs) if run["process"] == process
        ) == sorted(kernels)


def test_cli_batch_and_folio_runs(tmp_path):
    stdout = ok(pagezero_cli("batch", "-s", "1MB", "-b", "256KB", "-l", "1", "--runs", "2"))
    assert "# 2 runs (batch 256KB): between runs +- " in stdout
    rows = json.loads(
        ok(
            pagezero_cli(
                "folio",
                "-p",
                "64KB",
                "--strategy",
                "sequential",
                "-l",
                "1",
                "--runs",
                "2",
                "--format",
                "json",
            )
        )
    )
    assert [(r["strategy"], r["runs"], r["loops"]) for r in rows] == [("sequential", 2, 2)]


def test_cli_mmap_runs(tmp_path):
    stdout = ok(pagezero_cli("mem", "mmap", "-s", "1MB", "-l", "1", "-f", "demand", "--runs", "2"))
    assert any(BETWEEN_RUNS.match(line) for line in stdout.splitlines()), stdout


@pytest.mark.parametrize("value", ["0", "-1", "x"])
@pytest.mark.parametrize(
    "command",
    [["mem", "memset"], ["mem", "memcpy"], ["mem", "mmap"], ["batch"], ["folio"]],
    ids=" ".join,
)
def test_cli_a_bad_runs_is_a_usage_error(command, value, capsys):
    line = check_usage_error(pagezero_main(capsys, *command, "--runs", value))
    assert f"--runs: invalid integer '{value}'" in line or (
        f"--runs: must be a positive integer, not {value}" in line
    )


def test_cli_headroom_needs_one_process():
    line = check_usage_error(pagezero_cli("mem", "mmap", "--headroom", "--runs", "2"))
    assert "without --runs" in line
