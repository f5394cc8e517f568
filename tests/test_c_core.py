"""The C-level kernel tests (tests/c/), built and run from pytest.

The sanitizer build (ASan + UBSan, every finding fatal) runs the same guard
page and canary checks as the Python tests, but on the C core alone, so a
stray byte or an undefined shift is caught where it happens.
"""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "tests", "c", "build.sh")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize("mode", ["normal", "sanitize"])
def test_c_kernel_tests(mode):
    proc = subprocess.run(["bash", BUILD, mode], capture_output=True, text=True, cwd=ROOT)
    summary = proc.stdout.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert summary[0].endswith(" 0 failed"), summary


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
def test_c_tsc_clock_rate(tmp_path):
    # The tsc clock ticks at the rate tsc_hz() states (tests/c/test_clock.c).
    exe = str(tmp_path / "test_clock")
    subprocess.run(["gcc", "-O2", "-Icsrc", "-o", exe, "tests/c/test_clock.c", "csrc/clock.c",
                    "csrc/cpu.c", "-lm"], check=True, cwd=ROOT)
    proc = subprocess.run([exe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
