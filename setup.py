"""Build pagezero._core: the portable C core plus the kernels of this machine's arch/."""

import glob
import platform

from setuptools import Extension, setup

# Which arch/ directories to compile: generic always, plus the build machine's own.
# Anything else (riscv64, ppc64le, 32-bit arm, ...) gets the generic kernels only.
# csrc/kernels.c picks the matching .def rows by the compiler's own macros
# (__x86_64__, __aarch64__), so the two choices agree on a native build.
ARCH_DIRS = {
    "x86_64": ["generic", "x86"],
    "amd64": ["generic", "x86"],
    "aarch64": ["generic", "arm64"],
    "arm64": ["generic", "arm64"],
}


def arch_sources():
    dirs = ARCH_DIRS.get(platform.machine().lower(), ["generic"])
    return sorted(src for d in dirs for src in glob.glob(f"arch/{d}/*.c"))


COMPILE_FLAGS = [
    "-O3",
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    # Keep C loops as loops: gcc would otherwise turn the "generic" kernels
    # and the head/tail byte loops into memset/memcpy calls.
    "-fno-tree-loop-distribute-patterns",
    # The fault workloads run their threads with pthreads (in libc since glibc 2.34).
    "-pthread",
]

core = Extension(
    "pagezero._core",
    # csrc/*.c is the C core (no Python; tests/c/build.sh links it alone),
    # csrc/py/*.c the bindings, one file per Python-facing concern.
    sources=sorted(glob.glob("csrc/*.c")) + sorted(glob.glob("csrc/py/*.c")) + arch_sources(),
    include_dirs=["csrc", "csrc/py", "arch"],
    depends=glob.glob("csrc/*.h") + glob.glob("csrc/py/*.h") + glob.glob("arch/*/*.def"),
    extra_compile_args=COMPILE_FLAGS,
    # _core.BUILD["flags"]: results record how the kernels were compiled. The
    # compiler gets each argument as is (no shell), so the quotes are C's own.
    define_macros=[("PZ_BUILD_FLAGS", '"' + " ".join(COMPILE_FLAGS) + '"')],
    extra_link_args=["-pthread"],
)

setup(ext_modules=[core])
