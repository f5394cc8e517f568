"""The C-level tests of csrc/threads.c, cache.c, numa.c, counters.c (tests/c/test_threads.c),
built plain and with ASan + UBSan (every finding fatal, leaks included)."""
import glob
import os
import platform
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCH = {"x86_64": "x86", "amd64": "x86", "aarch64": "arm64", "arm64": "arm64"}.get(
    platform.machine().lower())
SOURCES = (["tests/c/test_threads.c"] +
           [f"csrc/{n}.c" for n in ("threads", "cache", "numa", "counters", "kernels", "cpu",
                                    "region", "clock")] +
           sorted(os.path.relpath(p, ROOT) for d in ["generic"] + ([ARCH] if ARCH else [])
                  for p in glob.glob(os.path.join(ROOT, "arch", d, "*.c"))))
FLAGS = {
    "normal": ["-O2"],
    "sanitize": ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                 "-fno-omit-frame-pointer"],
}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the C tests")
@pytest.mark.parametrize("mode", ["normal", "sanitize"])
def test_c_threads_tests(mode, tmp_path):
    exe = str(tmp_path / "test_threads")
    cmd = ["gcc", *FLAGS[mode], "-g", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-pthread",
           "-fno-tree-loop-distribute-patterns", "-Icsrc", "-Iarch", "-o", exe, *SOURCES]
    build = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert build.returncode == 0, build.stderr[-3000:]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    env.pop("PAGEZERO_FAKE_COUNTERS", None)
    proc = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1].endswith(" 0 failed")
