"""End-to-end tests of the command line, looking only at stdout, stderr, the
exit status and the files it writes. The commands run in this process
(tests/helpers/cli.py run_cli: the same main() a subprocess runs, without a
fresh interpreter each time); the last tests run `python -m pagezero` and the
console script as a user does, for what only a real process shows.

Sizes are small (1MB..16MB, two loops) so the whole file stays fast on a
two-core machine. No assertion is made on how fast anything is, only that
rates are printed the way perf prints them and are positive.
"""

import json
import os
import re
import sysconfig

import pytest
from conftest import (
    FUNCTION_RE,
    check_environment_error,
    check_rate_line,
    check_usage_error,
    hugepage_shortage,
    ok,
    pagezero_cli,
    require_hugepages,
)
from helpers.children import run
from helpers.cli import run_cli

import pagezero

SMALL = ["-s", "1MB", "-l", "2"]

COPYING_RE = re.compile(r"^# Copying (?P<size>\S+) bytes \.\.\.$")


# Helpers ----------------------------------------------------------------


def mem(benchmark, *args, **kw):
    return run_cli("mem", benchmark, *args, **kw)


def available(kind):
    return [k for k in pagezero.kernels(kind) if k.available]


def runnable(kind, value=0):
    """The kernels `-f all` runs: available ones, minus zero-only ones for a non-zero fill."""
    return [k for k in available(kind) if not (value != 0 and k.zero_only)]


def parse_default(stdout, benchmark):
    """Split perf-style output into (name, description, size, rate line) per function."""
    lines = stdout.splitlines()
    assert lines[0] == f"# Running 'mem/{benchmark}' benchmark:"
    body = lines[1:]
    assert len(body) % 4 == 0, stdout
    blocks = []
    for i in range(0, len(body), 4):
        function, copying, blank, rate = body[i : i + 4]
        fm, cm = FUNCTION_RE.match(function), COPYING_RE.match(copying)
        assert fm, function
        assert cm, copying
        assert blank == ""
        blocks.append((fm["name"], fm["description"], cm["size"], rate))
    return blocks


# Output format -----------------------------------------------------------


@pytest.mark.parametrize("size", ["1MB", "1mb", "1048576", "1024KB"])
def test_default_format_as_perf_prints_it(size):
    out = ok(mem("memset", "-s", size, "-l", "2", "-f", "default"))
    [(name, description, printed_size, rate)] = parse_default(out, "memset")
    assert name == "default"
    assert description == pagezero.find_kernel("default", "clear").description
    assert printed_size == size  # exactly as the user wrote it
    check_rate_line(rate)


@pytest.mark.parametrize("benchmark, kind", [("memset", "clear"), ("memcpy", "copy")])
def test_all_functions_default_format(benchmark, kind):
    out = ok(mem(benchmark, *SMALL, "-f", "all"))
    blocks = parse_default(out, benchmark)
    assert [b[0] for b in blocks] == [k.name for k in runnable(kind)]
    for name, description, size, rate in blocks:
        assert description == pagezero.find_kernel(name, kind).description
        assert size == "1MB"
        check_rate_line(rate)


def test_function_all_is_the_default():
    out = ok(mem("memset", *SMALL))
    assert [b[0] for b in parse_default(out, "memset")] == [k.name for k in runnable("clear")]


@pytest.mark.parametrize("benchmark, kind", [("memset", "clear"), ("memcpy", "copy")])
def test_simple_format_prints_one_number_per_function(benchmark, kind):
    out = ok(mem(benchmark, *SMALL, "-f", "all", "--format", "simple"))
    lines = out.splitlines()
    assert len(lines) == len(runnable(kind))
    for line in lines:
        assert float(line) > 0


@pytest.mark.parametrize("value", ["7", "loop"])
def test_all_skips_zero_only_kernels_for_a_nonzero_value(value):
    proc = mem("memset", *SMALL, "-f", "all", "--value", value, "--format", "simple")
    lines = ok(proc).splitlines()
    assert len(lines) == len(runnable("clear", value=value))
    for k in available("clear"):
        if k.zero_only:  # named in the one line of what -f all skips
            assert f"{k.name} (it can only write zeros)" in proc.stderr


@pytest.mark.parametrize("clock", ["ns", "timeval", "tsc"])
def test_clocks(clock):
    out = ok(mem("memset", "-s", "16MB", "-l", "2", "-f", "default", "--clock", clock))
    [(_, _, _, rate)] = parse_default(out, "memset")
    check_rate_line(rate)


@pytest.mark.parametrize("chunk", ["0", "64KB", "3000"])
def test_chunks(chunk):
    out = ok(mem("memset", *SMALL, "-f", "default", "-k", chunk, "--format", "simple"))
    assert float(out) > 0


@pytest.mark.parametrize("benchmark, kind", [("memset", "clear"), ("memcpy", "copy")])
def test_function_help_lists_every_kernel(benchmark, kind):
    out = ok(mem(benchmark, "-f", "help"))
    for k in pagezero.kernels(kind):
        assert re.search(
            rf"^\s+{re.escape(k.name)} \.\.\. {re.escape(k.description)}", out, re.M
        ), k.name


def test_kernels_command_lists_every_kernel_with_availability():
    out = ok(run_cli("kernels"))
    rows = {}
    for line in out.splitlines()[1:]:
        kind, name, avail = line.split()[:3]
        rows[kind, name] = avail
    expected = {(k.kind, k.name): k for kind in ("clear", "copy") for k in pagezero.kernels(kind)}
    assert set(rows) == set(expected)
    for key, k in expected.items():
        assert rows[key] == ("yes" if k.available else "no:")


# Bad input: one line on stderr, exit 2 ------------------------------------

BAD_INPUTS = {
    "size 0": (["mem", "memset", "-s", "0"], "invalid size '0'"),
    "offset 4096": (
        ["mem", "memset", "-s", "1MB", "--offset", "4096"],
        "offset must be .*not 4096",
    ),
    "offset x": (
        ["mem", "memset", "-s", "1MB", "--offset", "x"],
        "argument --offset: invalid integer 'x'",
    ),
    "size -1": (["mem", "memset", "-s", "-1"], "invalid size '-1'"),
    "size garbage": (["mem", "memset", "-s", "abc"], "invalid size 'abc'"),
    "size unknown unit": (
        ["mem", "memset", "-s", "12XB"],
        "invalid size '12XB': unknown unit 'XB'",
    ),
    "size fraction": (["mem", "memset", "-s", "1.5GB"], "invalid size '1.5GB'"),
    "size overflowing": (
        ["mem", "memset", "-s", "99999999TB"],
        "invalid size '99999999TB': too large",
    ),
    "memcpy size 0": (["mem", "memcpy", "-s", "0"], "invalid size '0'"),
    "page 3KB": (["mem", "memset", "-s", "1MB", "-p", "3KB"], "invalid page size '3KB'"),
    "chunk larger than size": (
        ["mem", "memset", "-s", "1MB", "-k", "2MB"],
        "invalid chunk '2MB': larger than the size",
    ),
    "chunk negative": (["mem", "memset", "-s", "1MB", "-k", "-1"], "invalid chunk '-1'"),
    "unknown function": (
        ["mem", "memset", "-s", "1MB", "-f", "nope"],
        "unknown clear kernel 'nope'",
    ),
    "memset-only function for memcpy": (
        ["mem", "memcpy", "-s", "1MB", "-f", "x86-64-stosb"],
        "unknown copy kernel 'x86-64-stosb'",
    ),
    "unknown clock": (["mem", "memset", "-s", "1MB", "--clock", "nope"], "unknown clock 'nope'"),
    "loops 0": (["mem", "memset", "-s", "1MB", "-l", "0"], "loops must be .*not 0"),
    "loops -3": (["mem", "memset", "-s", "1MB", "-l", "-3"], "loops must be .*not -3"),
    "loops x": (
        ["mem", "memset", "-s", "1MB", "-l", "x"],
        "argument -l/--nr_loops: invalid integer 'x'",
    ),
    "value 256": (["mem", "memset", "-s", "1MB", "--value", "256"], "fill value must be .*not 256"),
    "value -1": (["mem", "memset", "-s", "1MB", "--value", "-1"], "fill value must be .*not -1"),
    "value abc": (
        ["mem", "memset", "-s", "1MB", "--value", "abc"],
        "argument --value: invalid integer 'abc'",
    ),
    "value 256, one function": (
        ["mem", "memset", "-s", "1MB", "-f", "default", "--value", "256"],
        "fill value must be .*not 256",
    ),
    "format xml": (
        ["mem", "memset", "-s", "1MB", "--format", "xml"],
        "argument --format: invalid choice: 'xml'",
    ),
    "unknown option": (
        ["mem", "memset", "-s", "1MB", "--bogus"],
        "unrecognized arguments: --bogus",
    ),
    "unknown benchmark": (["mem", "memmove"], "argument BENCHMARK: invalid choice: 'memmove'"),
    "no command": ([], "required: COMMAND"),
    "-c with --clock ns": (
        ["mem", "memset", "-s", "1MB", "-c", "--clock", "ns"],
        "-c/--cycles and --clock ns contradict",
    ),
}


@pytest.mark.parametrize("args, words", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_one_line_naming_the_fault_and_writes_nothing(args, words, tmp_path):
    out = tmp_path / "out.json"
    extra = ["-o", str(out)] if args[:1] == ["mem"] else []
    proc = run_cli(*args, *extra)
    # The line names the option or value at fault (a regular expression).
    assert re.search(words, check_usage_error(proc))
    assert list(tmp_path.iterdir()) == []


# Environment failures: exit 1 with the cause and the fix --------------------


@pytest.mark.parametrize("clock_args", [["-c"], ["--clock", "cycles"]])
def test_no_cycle_counter_names_tsc(clock_args, without_pmu):
    proc = mem("memset", *SMALL, "-f", "default", *clock_args)
    check_environment_error(proc, "tsc")


def test_cycles_with_a_pmu_prints_cycles_per_byte(with_pmu):
    out = ok(mem("memset", *SMALL, "-f", "default", "-c", "--format", "simple"))
    assert float(out) > 0


@pytest.mark.owns_hugepage_pools
@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_too_few_1gb_hugepages(benchmark):
    size = hugepage_shortage("1GB", buffers=2 if benchmark == "memcpy" else 1)
    proc = mem(benchmark, "-p", "1GB", "-s", str(size), "-l", "2", "-f", "default")
    check_environment_error(proc, "hugepages", "nr_hugepages")


@pytest.mark.owns_hugepage_pools
def test_too_few_2mb_hugepages():
    proc = mem(
        "memset", "-p", "2MB", "-s", str(hugepage_shortage("2MB")), "-l", "2", "-f", "default"
    )
    check_environment_error(proc, "hugepages", "nr_hugepages")


def test_2mb_hugepages_when_reserved():
    require_hugepages("2MB")
    out = ok(
        mem("memset", "-p", "2MB", "-s", "2MB", "-l", "2", "-f", "default", "--format", "simple")
    )
    assert float(out) > 0


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_size_larger_than_memory(benchmark):
    proc = mem(benchmark, "-s", "64TB", "-l", "2", "-f", "default")
    check_environment_error(proc, "too large")


def test_environment_failure_writes_no_output_file(tmp_path):
    proc = mem("memset", "-s", "64TB", "-l", "2", "-o", str(tmp_path / "out.json"))
    assert proc.returncode == 1
    assert list(tmp_path.iterdir()) == []


# -o FILE.json --------------------------------------------------------------


def test_output_file_holds_one_result_per_function(tmp_path):
    path = tmp_path / "out.json"
    ok(mem("memset", *SMALL, "-f", "all", "-k", "64KB", "-o", str(path)))
    results = pagezero.load_results(str(path))
    assert [r.function for r in results] == [k.name for k in runnable("clear")]
    for r in results:
        assert r.benchmark == "memset"
        assert len(r.samples) == 2
        assert r.bytes_per_sec > 0
        assert dict(r.params) == {
            "size": 1 << 20,
            "page": "4KB",
            "chunk": 64 << 10,
            "loops": 2,
            "thp": False,
            "value": 0,
        }


def test_output_file_memcpy_and_loop_value(tmp_path):
    path = tmp_path / "copy.json"
    ok(mem("memcpy", *SMALL, "-f", "default", "-o", str(path)))
    [r] = pagezero.load_results(str(path))
    assert (r.benchmark, r.function, r.params["size"], r.loops) == ("memcpy", "default", 1 << 20, 2)

    path = tmp_path / "loop.json"
    ok(mem("memset", *SMALL, "-f", "default", "--value", "loop", "-o", str(path)))
    [r] = pagezero.load_results(str(path))
    assert r.params["value"] == "loop"


def test_output_file_relative_to_working_directory(tmp_path):
    ok(mem("memset", *SMALL, "-f", "default", "-o", "out.json", cwd=tmp_path))
    assert len(pagezero.load_results(str(tmp_path / "out.json"))) == 1


def test_output_into_missing_directory_fails_before_running(tmp_path):
    proc = mem("memset", *SMALL, "-o", str(tmp_path / "missing" / "out.json"))
    assert f"no directory '{tmp_path / 'missing'}'" in check_usage_error(proc)
    assert list(tmp_path.iterdir()) == []


# One integer parser: every integer option, the same spellings and errors ------------

INTEGER_OPTIONS = {
    "memset loops": (["mem", "memset", "-s", "1MB"], "-l", "-l/--nr_loops"),
    "memset threads": (["mem", "memset", "-s", "1MB"], "-t", "-t/--threads"),
    "memset node": (["mem", "memset", "-s", "1MB"], "--node", "--node"),
    "memset cpu node": (["mem", "memset", "-s", "1MB"], "--cpu-node", "--cpu-node"),
    "memset offset": (["mem", "memset", "-s", "1MB"], "--offset", "--offset"),
    "memset value": (["mem", "memset", "-s", "1MB"], "--value", "--value"),
    "mmap seed": (["mem", "mmap", "-s", "1MB"], "-r", "-r/--randomize"),
    "mmap threads": (["mem", "mmap", "-s", "1MB"], "-t", "-t/--threads"),
    "folio fault index": (["folio", "-p", "64KB"], "--fault-index", "--fault-index"),
    "batch loops": (["batch", "-s", "1MB"], "-l", "-l/--nr_loops"),
    "batch threads": (["batch", "-s", "1MB"], "-t", "-t/--threads"),
    "batch node": (["batch", "-s", "1MB"], "--node", "--node"),
    "sweep repeat": (["sweep", "memset", "-g", "loops=1", "-o", "x.json"], "-r", "-r/--repeat"),
    "sweep processes": (
        ["sweep", "memset", "-g", "loops=1", "-o", "x.json"],
        "--processes",
        "--processes",
    ),
}


@pytest.mark.parametrize("text", ["x", "1.5", "2MB", ""])
@pytest.mark.parametrize("args, option, name", INTEGER_OPTIONS.values(), ids=INTEGER_OPTIONS.keys())
def test_every_integer_option_fails_the_same_way(args, option, name, text):
    line = check_usage_error(run_cli(*args, option, text))
    assert line == f"pagezero: error: argument {name}: invalid integer {text!r}"


@pytest.mark.parametrize("loops", ["2", "02", "0x2", "0b10"])
def test_integers_in_decimal_or_with_a_base_prefix(loops, tmp_path):
    path = tmp_path / "out.json"
    ok(
        mem(
            "memset",
            "-s",
            "1MB",
            "-l",
            loops,
            "-f",
            "default",
            "--format",
            "simple",
            "-o",
            str(path),
        )
    )
    [r] = pagezero.load_results(str(path))
    assert r.loops == 2


# --format: default|simple|json, the same words in every command ----------------------


def test_kernels_formats():
    rows = json.loads(ok(run_cli("kernels", "--format", "json")))
    assert {(r["kind"], r["name"]) for r in rows} == {
        (k.kind, k.name) for kind in ("clear", "copy") for k in pagezero.kernels(kind)
    }
    names = ok(run_cli("kernels", "--kind", "clear", "--format", "simple")).split()
    assert names == [k.name for k in available("clear")]


def test_output_naming_a_directory_is_refused_before_measuring(tmp_path):
    # Found only after the measurement, it used to lose the whole run.
    line = check_usage_error(run_cli("mem", "memset", "-s", "4KB", "-l", "1", "-o", tmp_path))
    assert "is a directory" in line and str(tmp_path) in line


# The process itself: `python -m pagezero` and the console script -------------------


def test_python_m_pagezero_measures_and_prints_as_perf():
    out = ok(pagezero_cli("mem", "memset", *SMALL, "-f", "default"))
    [(name, _, size, rate)] = parse_default(out, "memset")
    assert (name, size) == ("default", "1MB")
    check_rate_line(rate)


@pytest.mark.parametrize(
    "args, words",
    [BAD_INPUTS["size 0"], BAD_INPUTS["no command"], BAD_INPUTS["loops x"]],
    ids=["size 0", "no command", "loops x"],
)
def test_python_m_pagezero_exits_2_with_one_line_on_bad_input(args, words):
    assert re.search(words, check_usage_error(pagezero_cli(*args)))


def test_python_m_pagezero_exits_1_on_what_the_machine_cannot_do():
    check_environment_error(
        pagezero_cli("mem", "memset", "-s", "64TB", "-l", "2", "-f", "default"), "too large"
    )


def test_the_console_script_runs_main():
    # The `pagezero` command pip installs beside this interpreter ([project.scripts]).
    script = os.path.join(sysconfig.get_path("scripts"), "pagezero")
    assert os.access(script, os.X_OK), script
    version = run([script, "--version"])
    assert ok(version) == f"pagezero {pagezero.__version__}\n"
    bad = run([script, "mem", "memset", "-s", "0"])
    assert "invalid size '0'" in check_usage_error(bad)
