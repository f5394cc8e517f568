"""One unit: perf's GB/sec (2^30 bytes/s) only on the lines that reproduce perf bench mem's
figure line, GB/s (10^9) on every line pagezero adds, run end to end on small real runs."""

import re

from helpers.cli import run_cli

import pagezero

PERF_FIGURE = re.compile(r"^ +\d+\.\d{6} (bytes|KB|MB|GB)/sec$")


def _rate_lines(stdout):
    return [line for line in stdout.splitlines() if "/sec" in line or "GB/s" in line]


def _check(stdout):
    """Every rate line is perf's figure line or says GB/s; returns pagezero's own lines."""
    own = []
    for line in _rate_lines(stdout):
        if PERF_FIGURE.match(line):
            continue
        assert "/sec" not in line, line
        own.append(line)
    return own


def test_memset_prints_perfs_figure_and_nothing_else_in_perfs_unit():
    p = run_cli("mem", "memset", "-s", "64KB", "-l", "3", "-f", "all")
    assert p.returncode == 0, p.stderr
    assert _check(p.stdout) == []
    assert sum(bool(PERF_FIGURE.match(x)) for x in p.stdout.splitlines()) >= 2


def test_mmap_headroom_is_pagezeros_line_in_gb_per_s():
    p = run_cli("mem", "mmap", "-s", "4MB", "-l", "2", "-f", "demand", "--headroom")
    assert p.returncode == 0, p.stderr
    (line,) = _check(p.stdout)
    assert line.startswith("# headroom 'demand': faults ") and " GB/s, " in line


def test_a_saved_run_reads_back_in_gb_per_s_where_perf_said_gb_per_sec(tmp_path):
    # The same file: perf's line in 2^30, its repr and compare's base cell in 10^9.
    out = tmp_path / "s.json"
    p = run_cli("mem", "memset", "-s", "64KB", "-l", "3", "-f", "generic", "-o", out)
    assert p.returncode == 0, p.stderr
    rs = pagezero.ResultSet.load(out)
    perf = float(next(x for x in p.stdout.splitlines() if PERF_FIGURE.match(x)).split()[0])
    total = sum(rs[0].samples) / 1e9
    assert perf == round(3 * 65536 / total / 2**30, 6)
    assert repr(rs).endswith(f": {rs.bytes_per_sec / 1e9:.2f} GB/s, 1 run>")
    c = run_cli("compare", out, out)
    assert c.returncode == 0, c.stderr
    assert f"{rs.bytes_per_sec / 1e9:.2f} GB/s +-" in c.stdout and "GB/sec" not in c.stdout
