import os
import subprocess
import sys

import pytest

import pagezero


def free_hugepages(page):
    """Free hugepages of `page` ("2MB" or "1GB") in the system pool, 0 if none."""
    kb = {"2MB": 2048, "1GB": 1048576}[page]
    try:
        with open(f"/sys/kernel/mm/hugepages/hugepages-{kb}kB/free_hugepages") as f:
            return int(f.read())
    except OSError:
        return 0


PAGE_SHIFT = {"2MB": 21, "1GB": 30}


def hugepage_shortage(page, buffers=1):
    """A size whose `buffers` mappings of `page` pages the free pool cannot all
    give. With two buffers the first mapping succeeds and the second fails,
    so the clean-up after a partial success is exercised too."""
    return (free_hugepages(page) // buffers + 1) << PAGE_SHIFT[page]


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def needs_hugepages(page, count=1):
    return pytest.mark.skipif(
        free_hugepages(page) < count,
        reason=f"needs {count} free {page} hugepage(s); none reserved "
               f"(as root: echo N > /sys/kernel/mm/hugepages/hugepages-*/nr_hugepages)",
    )


def available_kernels(kind):
    return [k.name for k in pagezero.kernels(kind) if k.available]


def _maps():
    with open(f"/proc/{os.getpid()}/maps") as f:
        for line in f:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            yield start, end


def mapping_count():
    """Mappings of this process. Python's allocator maps and unmaps arenas
    too, so compare counts only around calls that map nothing on success."""
    return sum(1 for _ in _maps())


def is_mapped(address):
    return any(start <= address < end for start, end in _maps())


# Subprocesses run from here, not from the repository root: `python -m` and
# `python -c` put their working directory first on sys.path, and the root's
# pagezero/ is the source tree, without the built extension.
TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def run_python(*args, cwd=None, **kwargs):
    """Run this interpreter with `args` against the installed pagezero."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=cwd or TESTS_DIR, timeout=300, **kwargs)
