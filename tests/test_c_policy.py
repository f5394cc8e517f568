"""The C-level policy tests (tests/c/test_policy.c), built and run from pytest.

The walks and timed loops of the clearing policies on the C core alone,
once plainly and once under ASan + UBSan (every finding fatal), with the
memory between guard pages.
"""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "tests", "c", "build_policy.sh")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize("mode", ["normal", "sanitize"])
def test_c_policy_tests(mode):
    proc = subprocess.run(["bash", BUILD, mode], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    summary = proc.stdout.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert summary[0].endswith(" 0 failed"), summary
