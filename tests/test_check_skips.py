"""tests/check_skips.py, CI's check of the skipped tests, on a small JUnit report."""

import check_skips

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3" skipped="2">
<testcase classname="tests.test_a" name="test_ran" time="0.1"/>
<testcase classname="tests.test_a" name="test_pmu[x]" time="0.0">
<skipped type="pytest.skip" message="no hardware cycle counter (PMU) on this machine">x</skipped>
</testcase>
<testcase classname="tests.test_b" name="test_avx512" time="0.0">
<skipped type="pytest.skip" message="this CPU lacks avx512f">x</skipped>
</testcase>
</testsuite></testsuites>
"""


def run(tmp_path, capsys, expected):
    (tmp_path / "junit.xml").write_text(JUNIT)
    (tmp_path / "kind.txt").write_text(expected)
    status = check_skips.main(
        ["check_skips", str(tmp_path / "junit.xml"), str(tmp_path / "kind.txt")]
    )
    return status, capsys.readouterr().out


def test_the_expected_set_passes_and_is_printed_with_reasons(tmp_path, capsys):
    status, out = run(
        tmp_path,
        capsys,
        "# a comment\ntests/test_a.py::test_pmu[x]  # PMU\ntests/test_b.py::test_avx512\n",
    )
    assert status == 0
    assert "tests/test_a.py::test_pmu[x]  # no hardware cycle counter (PMU)" in out


def test_a_new_skip_fails(tmp_path, capsys):
    status, out = run(tmp_path, capsys, "tests/test_a.py::test_pmu[x]\n")
    assert status == 1 and "skipped, not expected" in out and "test_avx512" in out


def test_a_skip_gone_fails(tmp_path, capsys):
    expected = (
        "tests/test_a.py::test_pmu[x]\ntests/test_b.py::test_avx512\ntests/test_a.py::test_ran\n"
    )
    status, out = run(tmp_path, capsys, expected)
    assert status == 1 and "expected to skip, ran (or is gone): tests/test_a.py::test_ran" in out


def test_a_line_with_facts_is_expected_only_where_they_hold(tmp_path):
    listing = tmp_path / "kind.txt"
    listing.write_text(
        "tests/test_a.py::test_pmu[x] @no-pmu  # PMU\n"
        "tests/test_b.py::test_avx512 @no-avx512f @not-arm64\n"
        "tests/test_c.py::test_always\n"
    )
    facts = {"no-pmu": lambda: True, "no-avx512f": lambda: False, "not-arm64": lambda: True}
    assert check_skips.expected(str(listing), facts) == {
        "tests/test_a.py::test_pmu[x]",
        "tests/test_c.py::test_always",
    }
    facts["no-avx512f"] = lambda: True
    assert "tests/test_b.py::test_avx512" in check_skips.expected(str(listing), facts)


def test_an_unknown_fact_is_one_line_and_status_2(tmp_path, capsys):
    (tmp_path / "junit.xml").write_text(JUNIT)
    (tmp_path / "kind.txt").write_text("tests/test_a.py::test_pmu[x] @no-such-fact\n")
    status = check_skips.main(
        ["check_skips", str(tmp_path / "junit.xml"), str(tmp_path / "kind.txt")]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "unknown fact @no-such-fact" in err


def test_the_facts_read_this_machine_without_pagezero():
    with open("/proc/cpuinfo") as f:
        flags = next((line for line in f if line.startswith(("flags", "Features"))), "")
    assert check_skips.FACTS["no-avx512f"]() == ("avx512f" not in flags.split())
