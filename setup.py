"""Build pagezero._core: the portable C core plus the kernels of this machine's arch/.

The lists below are the build's one description: tests/conftest.py imports this file
(without setuptools, which a test environment need not have) to compile the suite's
test build from the same sources with the same flags, plus -DPZ_TEST_SWITCHES.
"""

import glob
import platform

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


def sources(root="."):
    """csrc/*.c is the C core (no Python; tests/c/build.sh links it alone), csrc/py/*.c
    the bindings, one file per Python-facing concern, then the arch's kernels."""
    dirs = ARCH_DIRS.get(platform.machine().lower(), ["generic"])
    patterns = ["csrc/*.c", "csrc/py/*.c"] + [f"arch/{d}/*.c" for d in dirs]
    return [src for p in patterns for src in sorted(glob.glob(p, root_dir=root))]


def headers(root="."):
    patterns = ["csrc/*.h", "csrc/py/*.h", "arch/*/*.def"]
    return [h for p in patterns for h in sorted(glob.glob(p, root_dir=root))]


INCLUDE_DIRS = ["csrc", "csrc/py", "arch"]

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
LINK_FLAGS = ["-pthread"]


def define_macros(flags):
    """_core.BUILD["flags"]: results record how the kernels were compiled. The
    compiler gets each argument as is (no shell), so the quotes are C's own."""
    return [("PZ_BUILD_FLAGS", '"' + " ".join(flags) + '"')]


if __name__ == "__main__":  # setuptools runs it so; conftest imports it under its own name
    from setuptools import Extension, setup

    core = Extension(
        "pagezero._core",
        sources=sources(),
        include_dirs=INCLUDE_DIRS,
        depends=headers(),
        extra_compile_args=COMPILE_FLAGS,
        define_macros=define_macros(COMPILE_FLAGS),
        extra_link_args=LINK_FLAGS,
    )
    setup(ext_modules=[core])
