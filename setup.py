"""Build pagezero._core: the portable C core plus the kernels of this machine's arch/.

The lists below are the build's one description: tests/conftest.py imports this file
(without setuptools, which a test environment need not have) to compile the suite's
test build from the same sources with the same flags, plus -DPZ_TEST_SWITCHES.
"""

import glob
import os
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
    # The fault workloads run their threads with pthreads (in libc since glibc 2.34).
    "-pthread",
]
LINK_FLAGS = ["-pthread"]

# Keep C loops as loops: the compiler would otherwise turn the "generic" kernels and
# the head/tail byte loops (csrc/kernels.c) into memset/memcpy calls, and "generic"
# would measure glibc. gcc does it in loop distribution; clang in loop-idiom
# recognition, which ignores gcc's flag (with a warning) but forms no call to a
# function its -fno-builtin-<name> takes away. tests/c/check_loops.sh checks both.
KEEP_LOOPS = {
    "gcc": ["-fno-tree-loop-distribute-patterns"],
    "clang": ["-fno-builtin-memset", "-fno-builtin-memcpy", "-fno-builtin-memmove"],
}


def compiler_kind(cc):
    """The kind of compiler `cc` (a command, a list of words) is, "clang" or "gcc" (any
    other is taken for a gcc-alike): by what it predefines, not what it is called, since
    "cc" may be either."""
    import subprocess

    p = subprocess.run(
        [*cc, "-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True, check=True
    )
    return "clang" if "#define __clang__ " in p.stdout else "gcc"


def compile_flags(kind):
    """setup.py's own flags for a compiler of `kind` (compiler_kind)."""
    return [*COMPILE_FLAGS, *KEEP_LOOPS[kind]]


def split_command(words):
    """A compiler command line as setuptools holds it (["gcc", "-pthread", "-O2", ...] or
    ["ccache", "gcc", ...]): the compiler (the words before the first flag), the flags."""
    n = next((i for i, w in enumerate(words) if w.startswith("-")), len(words))
    return words[:n], words[n:]


def define_macros(flags):
    """_core.BUILD["flags"]: results record how the kernels were compiled, so `flags` is
    every flag of the command line that compiles them. The compiler gets each argument as
    is (no shell), so the quotes are C's own, and a flag's own quote or backslash (a
    -DNAME="value" among the CFLAGS) is escaped for the string literal."""
    text = " ".join(flags).replace("\\", "\\\\").replace('"', '\\"')
    return [("PZ_BUILD_FLAGS", '"' + text + '"')]


if __name__ == "__main__":  # setuptools runs it so; conftest imports it under its own name
    from setuptools import Extension, setup
    from setuptools.command.build_ext import build_ext

    class BuildExt(build_ext):
        """Flags for the compiler setuptools runs, recorded whole: its command holds
        Python's own CFLAGS and CCSHARED (sysconfig's, or the CC, CFLAGS and CPPFLAGS of
        the environment), which come before, and may differ from, setup.py's."""

        def build_extension(self, ext):
            cc, python_flags = split_command(list(self.compiler.compiler_so))
            ext.extra_compile_args = compile_flags(compiler_kind(cc))
            ext.define_macros = define_macros([*python_flags, *ext.extra_compile_args])
            super().build_extension(ext)

    core = Extension(
        "pagezero._core",
        sources=sources(),
        include_dirs=INCLUDE_DIRS,
        depends=headers(),
        extra_link_args=LINK_FLAGS,
    )
    setup(ext_modules=[core], cmdclass={"build_ext": BuildExt})
