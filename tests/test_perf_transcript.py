"""pagezero's perf-style output against transcripts of Debian's perf 6.1 (captured
once into tests/data/perf/, see its README.md): the same lines in the same order for
the functions both have, numbers compared by their shape (width, decimals), not their
value. The function descriptions are pagezero's own, so only the names are compared.

Known difference, by design (README.md, --format): pagezero's `--format simple` prints
the numbers only; perf 6.1 prints each function's "# function" line above its number."""

import os
import re

import pytest
from conftest import FUNCTION_RE, ok, pagezero_cli

PERF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "perf")
NUMBER = re.compile(r" *\d+\.\d+")


def shape(line):
    """The line with each number replaced by its width and number of decimals."""
    return NUMBER.sub(lambda m: f"<{len(m[0])}.{len(m[0].split('.')[1])}>", line)


def transcript(name):
    with open(os.path.join(PERF, name)) as f:
        return f.read().splitlines()


def blocks(lines):
    """{function name: its lines, the "# function" line's description cut} in order."""
    out = {}
    current = None
    for line in lines[1:]:
        m = FUNCTION_RE.match(line)
        if m:
            current = m["name"]
            out[current] = [f"# function '{current}'"]
        elif current is not None and "skipped" not in line:
            out[current].append(shape(line))
    return out


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_default_output_has_perfs_lines(benchmark):
    perf = transcript(f"perf-6.1-{benchmark}-1MB.txt")
    mine = ok(pagezero_cli("mem", benchmark, "-s", "1MB", "-l", "2", "-f", "all")).splitlines()
    assert mine[0] == perf[0] == f"# Running 'mem/{benchmark}' benchmark:"
    theirs, ours = blocks(perf), blocks(mine)
    assert len(theirs) == 4  # default, x86-64-unrolled and the two rep kernels
    # perf's functions, in perf's order, among pagezero's (which has more).
    assert [name for name in ours if name in theirs] == list(theirs)
    for name, lines in theirs.items():
        assert ours[name] == lines, name
    # Every line of pagezero's blocks has a shape perf prints.
    perf_shapes = {line for lines in theirs.values() for line in lines[1:]}
    assert {line for lines in ours.values() for line in lines[1:]} <= perf_shapes


@pytest.mark.parametrize("benchmark", ["memset", "memcpy"])
def test_simple_numbers_have_perfs_shape(benchmark):
    perf = [x for x in transcript(f"perf-6.1-{benchmark}-simple.txt") if not x.startswith("#")]
    mine = ok(
        pagezero_cli(
            "mem", benchmark, "-s", "1MB", "-l", "2", "-f", "default", "--format", "simple"
        )
    ).splitlines()
    assert len(perf) == 4 and len(mine) == 1

    # bytes/sec as "%lf": no padding, six decimals (perf's print_bps() simple branch).
    # (The integer part's width is the rate's magnitude, so it is not compared.)
    def decimals(line):
        return re.sub(r"^\d+\.(\d+)$", lambda m: f"N.{len(m[1])}", line)

    assert {decimals(x) for x in perf} == {decimals(mine[0])} == {"N.6"}
