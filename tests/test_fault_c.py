"""The C-level fault workload tests (tests/c/test_fault.c), built and run here.

Built twice, plain and with AddressSanitizer + UndefinedBehaviorSanitizer
(every finding fatal, leaks included), so the threads, the smaps parsing and
the error paths of csrc/fault.c are checked without Python in the way.
"""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = ["tests/c/test_fault.c", "csrc/fault.c", "csrc/clock.c", "csrc/cpu.c", "csrc/region.c"]
FLAGS = {
    "normal": ["-O2"],
    "sanitize": ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                 "-fno-omit-frame-pointer"],
}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize("mode", ["normal", "sanitize"])
def test_c_fault_tests(mode, tmp_path):
    exe = str(tmp_path / "test_fault")
    cmd = ["gcc", *FLAGS[mode], "-g", "-Wall", "-Wextra", "-Werror", "-pthread",
           "-Icsrc", "-Iarch", "-o", exe, *SOURCES]
    build = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert build.returncode == 0, build.stderr[-3000:]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    proc = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1].endswith(" 0 failed")
