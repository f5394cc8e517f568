"""`-f all`'s lines: the kernels it skips named once, in one line on stderr; a stop signal
says how far it came in functions (and runs), not in loops of every kernel added up."""

from helpers.cli import run_cli

from pagezero.cli.render import Measured
from pagezero.results.resultset import Result
from pagezero.system.kernels import kernels


def test_the_skipped_kernels_are_one_line_on_stderr_once():
    # A non-zero byte rules out the zeros-only kernels (clzero, DC ZVA) on any CPU that
    # has them, and the CPU rules out what it lacks: all in one line, stdout perf's alone.
    unfit = [k.name for k in kernels("clear") if not k.available or k.zero_only]
    p = run_cli("mem", "memset", "-s", "64KB", "-l", "2", "-f", "all", "--value", "1")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    if not unfit:
        assert not any(line.startswith("# -f all skips") for line in lines)
        return
    (line,) = [x for x in lines if "skip" in x]
    assert line.startswith("# -f all skips ")
    assert [part.split(" (")[0] for part in line[len("# -f all skips ") :].split("), ")] == unfit
    assert "skip" not in p.stdout
    ran = [x for x in p.stdout.splitlines() if x.startswith("# function '")]
    assert len(ran) == len(kernels("clear")) - len(unfit)


def one(function, loops):
    return Result(
        benchmark="memset",
        function=function,
        params={"size": 4096, "loops": loops},
        bytes_per_loop=4096,
        clock="ns",
        samples=[1000] * loops,
    )


def test_a_stop_in_the_third_of_four_functions_says_so():
    m = Measured(None, 4 * 10, ["a", "b", "c", "d"])
    m.results = [one("a", 10), one("b", 10), one("c", 3)]
    assert m._progress(23) == "2 of 4 functions, 10 loops each, and 3 loops of c"
    m.results = [one("a", 10)]
    assert m._progress(10) == "1 of 4 functions, 10 loops each"


def test_a_stop_in_the_second_of_three_runs_counts_whole_runs():
    m = Measured(None, 3 * 2 * 10, ["a", "b"], runs=3)
    m.results = [one("b", 10), one("a", 10), one("a", 4)]
    m.runs = [{"process": 0}, {"process": 0}, {"process": 1}]
    assert m._progress(24) == "1 of 3 runs of 2 functions, 10 loops each"


def test_one_function_still_counts_its_loops():
    m = Measured(None, 3 * 50, ["a"], runs=3)
    m.results = [one("a", 50), one("a", 7)]
    assert m._progress(57) == "57 of 150 loops"
