"""The pytest plugin's pagezero marker and its promise to stay out of the way.

Hugepage cases run in-process (runpytest_inprocess) against conftest's fake
sysfs (the `fake` fixture), which monkeypatch installs in this process only:
the real pools are never touched. The CPU-feature case runs in a subprocess,
whose pagezero._core detects its features afresh under
PAGEZERO_HIDE_FEATURES.
"""

import pytest

import pagezero
from pagezero import _core

pytest_plugins = ["pytester"]

HUGEPAGE_TEST = """
import pytest
import pagezero

@pytest.mark.pagezero(hugepages={"2MB": 3})
def test_huge():
    assert pagezero.hugepage_pools()["2MB"].available >= 3
    BODY
"""


def hugepage_test(pytester, body="pass"):
    pytester.makepyfile(test_huge=HUGEPAGE_TEST.replace("BODY", body))


@pytest.mark.parametrize("where, args", [("test_huge.py:*", []), ("*", ["-p", "no:skipping"])])
def test_missing_hugepages_skip_naming_them(pytester, fake, where, args):
    # Filed under the test's own location, as a skip marker is; without the
    # skipping plugin, the plugin skips the test itself.
    hugepage_test(pytester)
    result = pytester.runpytest_inprocess("-rs", *args)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [f"SKIPPED [[]1[]] {where}: needs 3 free 2MB hugepages (0 available; --pagezero-reserve*"]
    )
    assert fake.writes == []


@pytest.mark.parametrize(
    "body, outcome",
    [
        ("pass", {"passed": 1}),
        ("assert False", {"failed": 1}),
        ("raise RuntimeError", {"failed": 1}),
    ],
)
def test_reserve_gives_the_pages_back_after_the_test(pytester, fake, body, outcome):
    hugepage_test(pytester, body)
    result = pytester.runpytest_inprocess("--pagezero-reserve")
    result.assert_outcomes(**outcome)
    assert fake.writes == [3, 0] and fake.get("total") == 0


def test_reserve_gives_the_pages_back_when_the_run_is_interrupted(pytester, fake):
    hugepage_test(pytester, "raise KeyboardInterrupt")
    # inline_run, as runpytest_inprocess is but keeping the Ctrl-C to itself.
    recorder = pytester.inline_run("--pagezero-reserve", no_reraise_ctrlc=True)
    assert recorder.ret == pytest.ExitCode.INTERRUPTED
    assert fake.writes == [3, 0] and fake.get("total") == 0


def test_a_test_skipped_otherwise_takes_no_pages(pytester, fake):
    pytester.makepyfile(
        test_huge=HUGEPAGE_TEST.replace("BODY", "").replace(
            "@pytest.mark.pagezero", "@pytest.mark.skip(reason='not today')\n@pytest.mark.pagezero"
        )
    )
    result = pytester.runpytest_inprocess("-rs", "--pagezero-reserve")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*not today*"])
    assert fake.writes == []


def test_reserve_not_possible_skips_saying_why(pytester, fake, monkeypatch):
    monkeypatch.setattr(pagezero.system.hugepages.os, "geteuid", lambda: 1000)
    hugepage_test(pytester)
    result = pytester.runpytest_inprocess("-rs", "--pagezero-reserve")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*needs 3 free 2MB hugepages (reserving failed: *needs root*"])
    assert fake.writes == []


def hideable():
    """A kernel this CPU runs that needs a CPU feature, and that feature."""
    for k in pagezero.kernels("clear"):
        if k.available and k.features:
            return k.name, k.features[0]
    pytest.skip("no available kernel here needs a CPU feature pagezero can hide")


def test_missing_features_and_kernels_skip_naming_them(pytester, monkeypatch):
    kernel, feature = hideable()
    monkeypatch.setenv("PAGEZERO_HIDE_FEATURES", feature)
    pytester.makepyfile(
        test_needs=f"""
        import pytest

        @pytest.mark.pagezero(features=[{feature!r}])
        def test_feature():
            pass

        @pytest.mark.pagezero(kernels=[{kernel!r}])
        def test_kernel():
            pass

        @pytest.mark.pagezero(kernels=["default"], features=[])
        def test_met():
            pass

        @pytest.mark.pagezero(kernels=["no-such-kernel"])
        def test_typo():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-rs", "--strict-markers")
    result.assert_outcomes(passed=1, skipped=2, errors=1)
    result.stdout.fnmatch_lines_random(
        [
            f"SKIPPED [[]1[]] test_needs.py:*: needs CPU feature {feature}",
            f"SKIPPED [[]1[]] test_needs.py:*: needs kernel {kernel} (*{feature}*)",
            "*pagezero marker: no kernel named 'no-such-kernel'*",
        ]
    )


# Inert unless used --------------------------------------------------------------

# A suite that knows nothing of pagezero: every outcome, a fixture, its own marker.
PLAIN_SUITE = """
import pytest

@pytest.fixture
def value():
    return 2

def test_pass(value):
    assert value == 2

def test_fail():
    assert 1 == 2

@pytest.mark.skip(reason="because")
def test_skip():
    pass

@pytest.mark.xfail
def test_xfail():
    assert False

@pytest.mark.slow
def test_marked():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("setup")

def test_error(broken):
    pass
"""


def test_a_suite_that_does_not_use_it_gets_the_same_outcomes(pytester):
    pytester.makepyfile(test_plain=PLAIN_SUITE)
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow tests\n")
    with_plugin = pytester.runpytest_inprocess("--strict-markers")
    without = pytester.runpytest_inprocess("--strict-markers", "-p", "no:pagezero")
    expected = {"passed": 2, "failed": 1, "skipped": 1, "xfailed": 1, "errors": 1}
    with_plugin.assert_outcomes(**expected)
    without.assert_outcomes(**expected)
    assert with_plugin.ret == without.ret
    assert "pagezero" not in with_plugin.stdout.str().split("plugins:")[1].split("\n", 1)[1]


def test_the_plugin_is_registered_with_its_options_and_marker(pytester):
    result = pytester.runpytest_inprocess("--help")
    result.stdout.fnmatch_lines(["pagezero: clearing benchmarks in CI:", "*--pagezero-save=DIR*"])
    result = pytester.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(
        ["@pytest.mark.pagezero(hugepages=None, features=None, kernels=None)*"]
    )


def test_features_the_marker_checks_are_pagezeros():
    # The marker's names are the ones pagezero detects (and can hide).
    assert set(_core.cpu_features()) <= set(pagezero.machine()["cpu_features"])
