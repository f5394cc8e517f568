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
